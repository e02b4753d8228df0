import Foundation
import LookoutWire

extension JSONValue {
    /// The value as a number: `.int`, `.double`, or a string holding a number (Nightscout
    /// uploaders send both `120` and `"120"`); else `nil`.
    public var lenientDoubleValue: Double? {
        if case .string(let s) = self { return Double(s.trimmingCharacters(in: .whitespaces)) }
        return doubleValue
    }
}
