// Fuzz/wire_json.swift — libFuzzer harness for LookoutWire's JSON parser (JSONParser, the one
// every Kit and the simulator use), differential against Foundation's JSONDecoder.
//
// Built with LookoutWire's JSON sources by Fuzz/run (swiftc -sanitize=fuzzer,address). Checks, per input:
//   - parsing never traps; failures are JSONParseError with an offset inside the input;
//   - what the parser accepts, JSONDecoder accepts too (the parser is the stricter one);
//   - when the parser says its result is exact (the contract NightscoutKit's JSONValueDecoding relies on to
//     skip JSONDecoder), the value equals JSONDecoder + JSONValue.init(from:)'s, with numbers
//     compared by kind and bits.
import Foundation
import LookoutWire

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FUZZ CHECK FAILED: " + message()) }
}

/// Equality that tells .int from .double and compares doubles by bits.
private func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.int, .double), (.double, .int): return false
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { k, v in y[k].map { same(v, $0) } ?? false }
    default: return a == b
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Data(bytes: data, count: size)
    let parsed: (value: JSONValue, exact: Bool)
    do {
        parsed = try JSONParser.parseCheckingExactness(input)
    } catch let error as JSONParseError {
        check(error.offset >= 0 && error.offset <= size, "offset \(error.offset) outside 0...\(size)")
        return 0
    } catch {
        fatalError("FUZZ CHECK FAILED: unexpected error \(error)")
    }
    let reference: JSONValue
    do {
        reference = try JSONDecoder().decode(JSONValue.self, from: input)
    } catch {
        fatalError("FUZZ CHECK FAILED: parser accepts what JSONDecoder rejects (\(error)): \(parsed.value)")
    }
    if parsed.exact {
        check(same(parsed.value, reference), "exact result \(parsed.value) differs from JSONDecoder's \(reference)")
    }
    return 0
}
