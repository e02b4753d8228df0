// Fuzz/toml.swift — libFuzzer harness for Lookout's TOML parser (LookoutConfig/TOML*).
//
// Built with the parser's sources by Fuzz/run (swiftc -sanitize=fuzzer,address). Checks, per
// input (read as UTF-8, invalid bytes replaced, as the config loader reads files):
//   - parsing never traps or hangs; every failure is a ConfigError with a message and, when it
//     has a place, a line within the text (+1) and a column ≥ 1.

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FUZZ CHECK FAILED: " + message()) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try TOMLParser.parse(text, fileName: "fuzz.toml")
    } catch {
        let lines = text.utf8.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }  // bytes: "\r\n" is one Character
        check(!error.message.isEmpty, "empty message")
        if let line = error.line { check(line >= 1 && line <= lines + 1, "line \(line) of \(lines): \(error)") }
        if let column = error.column { check(column >= 1, "column \(column): \(error)") }
    }
    return 0
}
