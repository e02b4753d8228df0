import Foundation
import SignalKKit
import XCTest

final class SignalKRobustnessTests: XCTestCase {
    /// Every prefix and many single-byte corruptions of every fixture either decode or throw a
    /// ``SignalKDecodingError``; nothing traps, and the fast and generic decoders agree.
    func testTruncatedAndCorruptedFixturesNeverTrap() throws {
        for name in try Fixtures.allJSONFiles() {
            let bytes = [UInt8](try Fixtures.data(name))
            var inputs: [[UInt8]] = (0..<bytes.count).map { Array(bytes[..<$0]) }
            for k in stride(from: 0, to: bytes.count, by: 3) {
                for replacement: UInt8 in [0x22, 0x7B, 0x5D, 0x2C, 0x00, 0xFF] {
                    var b = bytes
                    b[k] = replacement
                    inputs.append(b)
                }
            }
            for input in inputs {
                let fast = Result { try SignalKServerMessage.parse(input) }
                let generic = Result { try SignalKServerMessage.classify(SignalKJSON.parse(input)) }
                switch (fast, generic) {
                case (.success(let a), .success(let b)): XCTAssertEqual(a, b, name)
                case (.failure(let e), .failure):
                    XCTAssertTrue(e is SignalKDecodingError, "\(name): \(e)")
                default:
                    XCTFail("\(name): fast and generic decoders disagree on \(String(decoding: input, as: UTF8.self)): \(fast) vs \(generic)")
                }
                if case .success(.delta(let d)) = fast {
                    var model = SignalKDataModel()
                    model.apply(d)
                }
            }
        }
    }

    /// A key repeated in one object follows JSON's rule, the last one wins, in the single-pass
    /// decoder as in the generic one (a libFuzzer finding: the single pass refused the first bad
    /// `timestamp` that a later good one replaces).
    func testRepeatedKeysLastOneWins() throws {
        let frames = [
            #"{"updates":[{"timestamp":"not a time","timestamp":"2017-08-15T16:00:05.538Z","values":[{"path":"a","value":1}]}]}"#,
            #"{"updates":[{"values":7,"values":[{"path":"a","value":1}]}]}"#,
            #"{"updates":[{"source":3,"source":{"label":"x"},"values":[{"path":"a","value":1}]}]}"#,
            #"{"updates":[{"$source":[],"$source":"s","values":[{"path":"a","value":1}]}]}"#,
            #"{"updates":[{"values":[{"path":1,"path":"a","value":1}]}]}"#,
            #"{"context":1,"context":"vessels.self","updates":[{"values":[{"path":"a","value":1}]}]}"#,
            #"{"updates":[{"timestamp":"bad"}],"updates":[{"values":[{"path":"a","value":1}]}]}"#,
        ]
        for frame in frames {
            let generic = try SignalKServerMessage.classify(SignalKJSON.parse(frame))
            XCTAssertEqual(try SignalKServerMessage.parse(frame), generic, frame)
            guard case .delta(let d) = generic else { return XCTFail("not a delta: \(frame)") }
            XCTAssertEqual(d.updates.first?.values.first?.path, "a", frame)
        }
        // The last one also wins when it is the bad one.
        XCTAssertThrowsError(try SignalKServerMessage.parse(
            #"{"updates":[{"timestamp":"2017-08-15T16:00:05.538Z","timestamp":"never","values":[]}]}"#)) {
            XCTAssertTrue($0 is SignalKDecodingError, "\($0)")
        }
    }

    /// The inputs in Fuzz/regressions/signalk_delta (found by the libFuzzer harness) decode the same
    /// way in both decoders.
    func testFuzzRegressionInputs() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/regressions/signalk_delta").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertFalse(names.isEmpty, "no regression inputs in \(dir.path)")
        for name in names {
            let input = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            let fast = Result { try SignalKServerMessage.parse(input) }
            let generic = Result { try SignalKServerMessage.classify(SignalKJSON.parse(input)) }
            switch (fast, generic) {
            case (.success(let a), .success(let b)): XCTAssertEqual(a, b, name)
            case (.failure, .failure): break
            default: XCTFail("\(name): the decoders disagree: \(fast) vs \(generic)")
            }
        }
    }

    func testDiscoveryDocument() throws {
        let base = URL(string: "http://192.168.1.10:3000/signalk")!
        let doc = try SignalKJSON.parse(#"{"endpoints":{"v1":{"version":"2.31.1","signalk-http":"http://192.168.1.10:3000/signalk/v1/api/","signalk-ws":"ws://192.168.1.10:3000/signalk/v1/stream"}},"server":{"id":"signalk-server-node","version":"2.31.1"}}"#)
        let e = try SignalKEndpoints(json: doc, baseURL: base)
        XCTAssertEqual(e.http?.absoluteString, "http://192.168.1.10:3000/signalk/v1/api/")
        XCTAssertEqual(e.ws?.absoluteString, "ws://192.168.1.10:3000/signalk/v1/stream")
        XCTAssertNil(e.tcp)
        XCTAssertEqual(e.serverId, "signalk-server-node")
        let relative = try SignalKEndpoints(json: try SignalKJSON.parse(#"{"endpoints":{"v1":{"signalk-http":"/signalk/v1/api/"}}}"#), baseURL: base)
        XCTAssertEqual(relative.http?.absoluteString, "http://192.168.1.10:3000/signalk/v1/api/")
        XCTAssertThrowsError(try SignalKEndpoints(json: try SignalKJSON.parse(#"{"endpoints":{"v3":{}}}"#), baseURL: base)) {
            XCTAssertEqual("\($0)", "endpoints.v1: required field is missing")
        }
    }
}
