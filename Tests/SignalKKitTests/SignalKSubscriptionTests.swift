import Foundation
import SignalKKit
import XCTest

final class SignalKSubscriptionTests: XCTestCase {
    func testSubscribeJSONIsByteExact() {
        let table: [(SignalKSubscribeMessage, String)] = [
            (SignalKSubscribeMessage(subscribe: [
                SignalKSubscription(path: "navigation.speedOverGround", minPeriod: .milliseconds(200), policy: .instant),
                SignalKSubscription(path: "navigation.position", policy: .instant),
            ]),
             #"{"context":"vessels.self","subscribe":[{"path":"navigation.speedOverGround","policy":"instant","minPeriod":200},{"path":"navigation.position","policy":"instant"}]}"#),
            (SignalKSubscribeMessage(context: "vessels.*", subscribe: [
                SignalKSubscription(path: "navigation.position", period: .seconds(10), policy: .fixed),
            ]),
             #"{"context":"vessels.*","subscribe":[{"path":"navigation.position","policy":"fixed","period":10000}]}"#),
            (SignalKSubscribeMessage(context: nil, subscribe: [SignalKSubscription(path: "*")]),
             #"{"subscribe":[{"path":"*"}]}"#),
            (SignalKSubscribeMessage(context: "vessels.self", subscribe: [
                SignalKSubscription(path: "propulsion.*.oilTemperature", period: .milliseconds(1500), minPeriod: .seconds(0.25),
                               format: .delta, policy: .fixed),
            ], sourcePolicy: .all),
             #"{"context":"vessels.self","subscribe":[{"path":"propulsion.*.oilTemperature","format":"delta","policy":"fixed","period":1500,"minPeriod":250}],"sourcePolicy":"all"}"#),
            (SignalKSubscribeMessage(subscribe: [SignalKSubscription(path: "a\"b")]),
             #"{"context":"vessels.self","subscribe":[{"path":"a\"b"}]}"#),
        ]
        for (message, expected) in table {
            XCTAssertEqual(message.jsonString, expected)
            // The Encodable form carries the same members.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let encoded = try! encoder.encode(message)
            XCTAssertEqual(try SignalKJSON.parse(encoded), try SignalKJSON.parse(expected))
        }
    }

    func testPeriodsAreIntegerMilliseconds() {
        XCTAssertEqual(SignalKSubscription(path: "x", period: .seconds(1)).periodMilliseconds, 1000)
        XCTAssertEqual(SignalKSubscription(path: "x", minPeriod: .milliseconds(200)).minPeriodMilliseconds, 200)
        XCTAssertEqual(SignalKSubscription(path: "x", period: .microseconds(1500)).periodMilliseconds, 1)
    }

    func testUnsubscribeIsTheOnlyFormTheServerAccepts() throws {
        let m = SignalKUnsubscribeAllMessage()
        XCTAssertEqual(m.jsonString, #"{"context":"*","unsubscribe":[{"path":"*"}]}"#)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        XCTAssertEqual(String(decoding: try encoder.encode(m), as: UTF8.self), #"{"context":"*","unsubscribe":[{"path":"*"}]}"#)
    }
}
