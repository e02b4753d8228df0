// Fuzz/signalk_delta.swift — libFuzzer harness for Signal K frame decoding (SignalKKit: SignalKJSON over
// LookoutWire's JSONParser,
// the single-pass delta decoder SignalKFastDelta, SignalKServerMessage.classify, SignalKDataModel).
//
// Built with the Kit's sources by Fuzz/run (swiftc -sanitize=fuzzer,address). Checks, per input:
//   - decoding never traps; every failure is a SignalKDecodingError;
//   - the fast decoder (SignalKServerMessage.parse) and the generic one (classify(SignalKJSON.parse(_:)))
//     agree: the same message, or both fail;
//   - a decoded delta applies to an SignalKDataModel without trapping;
//   - a number on its own decodes exactly: .int when it has no fraction or exponent and fits
//     Int64, else .double with the bits of Double(text) (correctly rounded); beyond Double's
//     range it is an error.

/// The input as one JSON number token (RFC 8259 grammar), or nil.
private func numberToken(_ b: UnsafeBufferPointer<UInt8>) -> String? {
    var i = 0
    func digits() -> Int {
        let s = i
        while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
        return i - s
    }
    if i < b.count, b[i] == UInt8(ascii: "-") { i += 1 }
    let intStart = i
    let n = digits()
    guard n > 0, !(n > 1 && b[intStart] == UInt8(ascii: "0")) else { return nil }
    if i < b.count, b[i] == UInt8(ascii: ".") {
        i += 1
        guard digits() > 0 else { return nil }
    }
    if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
        i += 1
        if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
        guard digits() > 0 else { return nil }
    }
    return i == b.count ? String(decoding: b, as: UTF8.self) : nil
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FUZZ CHECK FAILED: " + message()) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let raw = UnsafeRawBufferPointer(bytes)
    let fast = Result { try SignalKServerMessage.parse(raw) }
    let generic = Result { try SignalKServerMessage.classify(SignalKJSON.parse(raw)) }
    switch (fast, generic) {
    case (.success(let a), .success(let b)):
        check(a == b, "fast and generic decoders differ: \(a) vs \(b)")
    case (.failure(let e), .failure(let g)):
        check(e is SignalKDecodingError && g is SignalKDecodingError, "unexpected error type: \(e) / \(g)")
    default:
        check(false, "fast and generic decoders disagree: \(fast) vs \(generic)")
    }
    if case .success(.delta(let delta)) = fast {
        var model = SignalKDataModel()
        _ = model.apply(delta)
    }
    if let text = numberToken(bytes) {
        let value = try? SignalKJSON.parse(raw)
        let integral = !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if integral, let i = Int64(text) {
            guard case .int(let got)? = value, got == i else {
                fatalError("FUZZ CHECK FAILED: \(text.prefix(80)) decoded as \(String(describing: value))")
            }
        } else if let d = Double(text), !d.isFinite {
            check(value == nil, "\(text.prefix(80)) is beyond Double's range but decoded as \(String(describing: value))")
        } else {
            let d = Double(text)!
            guard case .double(let got)? = value else { fatalError("FUZZ CHECK FAILED: \(text.prefix(80)) decoded as \(String(describing: value))") }
            check(got.bitPattern == d.bitPattern, "\(text.prefix(80)) decoded as \(got), Double(text) is \(d)")
        }
    }
    return 0
}
