import Foundation
import LookoutWire

/// A v3 `settings` document (spec §4.7): a per-application settings backup whose `identifier`
/// is the application name (e.g. `aaps`). The payload is application-defined and kept in
/// `extra`.
@dynamicMemberLookup
public struct NightscoutSettings: NightscoutDocument {
    /// Common fields (`identifier` = application name).
    public var common: CommonFields
    /// The application's settings fields, kept verbatim.
    public var extra: [String: JSONValue]

    /// Creates a settings document.
    public init(common: CommonFields = CommonFields(), extra: [String: JSONValue] = [:]) {
        self.common = common; self.extra = extra
    }

    /// Decodes; every non-common field goes to `extra`.
    public init(from decoder: any Decoder) throws {
        var r = try DocumentReader(decoder)
        common = try CommonFields(reading: &r)
        extra = try r.extras()
    }

    /// Encodes, re-emitting `extra`.
    public func encode(to encoder: any Encoder) throws {
        var w = DocumentWriter(encoder)
        try common.write(to: &w)
        try w.finish(extra: extra)
    }
}
