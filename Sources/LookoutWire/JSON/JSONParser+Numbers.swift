extension JSONParser {
    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

    /// Exact powers of ten as doubles (10^0 … 10^22).
    static let pow10: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    mutating func number() throws -> JSONValue {
        let start = position
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard position < bytes.count, JSONParser.isDigit(bytes[position]) else {
            throw error("invalid number: expected a digit", at: position)
        }
        let intStart = position
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, JSONParser.isDigit(bytes[position]) {
                throw error("invalid number: leading zero", at: intStart)
            }
        } else {
            while position < bytes.count, JSONParser.isDigit(bytes[position]) { position += 1 }
        }
        let intEnd = position
        var fracStart = position, fracEnd = position
        var exponent = 0
        var hugeExponent = false  // more exponent digits than `exponent` keeps
        var integral = true
        if at(UInt8(ascii: ".")) {
            integral = false
            position += 1
            fracStart = position
            guard position < bytes.count, JSONParser.isDigit(bytes[position]) else {
                throw error("invalid number: expected a digit after '.'")
            }
            while position < bytes.count, JSONParser.isDigit(bytes[position]) { position += 1 }
            fracEnd = position
        }
        if at(UInt8(ascii: "e")) || at(UInt8(ascii: "E")) {
            integral = false
            position += 1
            var expNegative = false
            if at(UInt8(ascii: "+")) || at(UInt8(ascii: "-")) {
                expNegative = bytes[position] == UInt8(ascii: "-"); position += 1
            }
            guard position < bytes.count, JSONParser.isDigit(bytes[position]) else {
                throw error("invalid number: expected a digit in the exponent")
            }
            while position < bytes.count, JSONParser.isDigit(bytes[position]) {
                if exponent < 1_000_000 {
                    exponent = exponent * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                } else {
                    hugeExponent = true
                }
                position += 1
            }
            if expNegative { exponent = -exponent }
        }
        if integral {
            var v: Int64 = 0
            var overflow = false
            for k in intStart..<intEnd {
                let d = Int64(bytes[k] - UInt8(ascii: "0"))
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (r, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
                if o1 || o2 { overflow = true; break }
                v = r
            }
            if !overflow { return .int(v) }
            return .double(try double(start))
        }
        let intCount = intEnd - intStart, count = intCount + (fracEnd - fracStart)
        func digit(_ j: Int) -> Int64 {
            Int64((j < intCount ? bytes[intStart + j] : bytes[fracStart + j - intCount]) - UInt8(ascii: "0"))
        }
        // Clinger's fast path: exact when the significant digits fit 53 bits and the power of ten
        // is exact; anything else goes through the standard library's correctly rounded parse.
        var d: Double?
        if !hugeExponent {
            var mantissa: UInt64 = 0
            var significant = 0
            for j in 0..<count {
                let x = digit(j)
                if significant == 0 && x == 0 { continue }
                significant += 1
                if significant > 19 { break }
                mantissa = mantissa * 10 + UInt64(x)
            }
            let e10 = exponent - (fracEnd - fracStart)
            if significant <= 19, mantissa < (1 << 53), e10 >= -22, e10 <= 22 {
                var m = Double(mantissa)
                m = e10 < 0 ? m / JSONParser.pow10[-e10] : m * JSONParser.pow10[e10]
                d = negative ? -m : m
            }
        }
        let value = try d ?? double(start)
        if options.numbers == .asWritten { return .double(value) }
        if hugeExponent {
            // The text's exponent is not known exactly (a finite value then needs a fraction
            // about as long as the exponent): decide from the double, and let Foundation decide.
            exact = false
            if value == value.rounded(), let v = Int64(exactly: value) { return .int(v) }
            return .double(value)
        }
        // Decide integrality from the text: the digits of the integer and fraction parts, as
        // one significand, times 10^power.
        var lo = 0, hi = count
        while lo < hi, digit(lo) == 0 { lo += 1 }
        if lo == hi { return .int(0) }  // all zeros (e.g. -0.0, 0e5)
        while hi > lo, digit(hi - 1) == 0 { hi -= 1 }
        let power = exponent - (fracEnd - fracStart) + (count - hi)
        let significant = hi - lo
        if power >= 0 {
            if significant + power <= 15 {
                var v: Int64 = 0
                for j in lo..<hi { v = v * 10 + digit(j) }
                for _ in 0..<power { v *= 10 }
                return .int(negative ? -v : v)
            }
            if significant + power > 19 { return .double(value) }  // ≥ 10^19: never an Int64
            exact = false
            if let v = Int64(exactly: value) { return .int(v) }
            return .double(value)
        }
        // Not integral in the text.
        if value == value.rounded() {
            exact = false  // precision loss or underflow made it integral; Foundation differs here
            if let v = Int64(exactly: value) { return .int(v) }
        }
        return .double(value)
    }

    func double(_ start: Int) throws -> Double {
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw error("number out of range", at: start) }
        return d
    }
}
