import LookoutWire

/// Path metadata as signalk-server's `@signalk/path-metadata` (`getMetadata`) gives it, for the
/// paths the simulated boat produces and their groups: `units` and `description` (descriptions as
/// in the Signal K schema). The same for every vessel (the schema's `/vessels/*/…` keys).
/// What meta PUTs and `meta` deltas add is kept by `SignalKStore` (runtime metadata); the
/// `displayUnits` served beside it are resolved by ``SignalKDisplayUnits``.
enum SignalKMeta {
    /// Dotted path (relative to a vessel) → metadata. `electrical.batteries.*` matches any battery.
    static let table: [String: JSONValue] = [
        "navigation": ["description": "Navigation data including Position, Course to next WP information, etc."],
        "navigation.speedOverGround": [
            "description":
                "Vessel speed over ground. If converting from AIS 'HIGH' value, set to 102.2 (Ais max value) and add warning in notifications",
            "units": "m/s",
        ],
        "navigation.courseOverGroundTrue": ["description": "Course over ground (true)", "units": "rad"],
        "navigation.headingTrue": [
            "description": "The current true north heading of the vessel, equals 'headingMagnetic adjusted for magneticVariation'",
            "units": "rad",
        ],
        "navigation.position": [
            "description": "The position of the vessel in 2 or 3 dimensions (WGS84 datum)",
            "properties": [
                "longitude": ["type": "number", "description": "Longitude", "units": "deg", "example": 4.98765245],
                "latitude": ["type": "number", "description": "Latitude", "units": "deg", "example": 52.0987654],
                "altitude": ["type": "number", "description": "Altitude", "units": "m"],
            ],
        ],
        "environment.depth": ["description": "Depth related data"],
        "environment.depth.belowTransducer": ["description": "Depth below Transducer", "units": "m"],
        "environment.water": ["description": "Environmental conditions of the water that the vessel is sailing in"],
        "environment.water.temperature": ["description": "Current water temperature", "units": "K"],
        "environment.wind": ["description": "Wind data."],
        "environment.wind.angleApparent": ["description": "Apparent wind angle, negative to port", "units": "rad"],
        "environment.wind.angleTrueWater": [
            "description": "True wind angle based on speed through water, negative to port", "units": "rad",
        ],
        "environment.wind.directionTrue": ["description": "The wind direction relative to true north", "units": "rad"],
        "environment.wind.speedApparent": ["description": "Apparent wind speed", "units": "m/s"],
        "environment.wind.speedTrue": [
            "description": "Wind speed over water (as calculated from speedApparent and vessel's speed through water)",
            "units": "m/s",
        ],
        "electrical.batteries": ["description": "Data about the vessel's batteries"],
        "electrical.batteries.*": ["description": "Batteries, one or many, within the vessel"],
        "electrical.batteries.*.voltage": [
            "description": "Voltage measured at or as close as possible to the device", "units": "V",
        ],
    ]

    /// The metadata of a vessel-relative dotted path, or nil.
    static func lookup(_ path: String) -> JSONValue? {
        if let m = table[path] { return m }
        let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if parts.count >= 3, parts[0] == "electrical", parts[1] == "batteries" {
            return table[(["electrical", "batteries", "*"] + parts.dropFirst(3)).joined(separator: ".")]
        }
        return nil
    }

    /// The metadata of a full key `vessels.<id>.<path>` (any vessel id), or nil.
    static func lookup(vesselKey key: [String]) -> JSONValue? {
        guard key.count >= 3, key[0] == "vessels" else { return nil }
        return lookup(key.dropFirst(2).joined(separator: "."))
    }

    /// The meta deltas `sendMeta=all` sends before `delta` reaches a socket (`ws.ts`
    /// `handleValuesMeta`): for each value path not yet sent, the path and its parents down to two
    /// segments, each with metadata (from `metadata`, with `displayUnits` resolved), once per
    /// context and path (`sent` remembers them).
    static func metaDeltas(
        before delta: JSONValue, sent: inout Set<String>, metadata: (_ context: String, _ path: String) -> JSONValue?
    ) -> [JSONValue] {
        let context = delta["context"]?.stringValue ?? ""
        var out: [JSONValue] = []
        for update in delta["updates"]?.arrayValue ?? [] {
            for v in update["values"]?.arrayValue ?? [] {
                guard let path = v["path"]?.stringValue, !path.isEmpty, !sent.contains(context + "." + path) else { continue }
                let split = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                var i = split.count
                while i > 1 {
                    let partial = split.prefix(i).joined(separator: ".")
                    if !sent.insert(context + "." + partial).inserted { break }
                    if let meta = metadata(context, partial) {
                        let value = SignalKDisplayUnits.enhance(meta, path: partial)
                        var u: [String: JSONValue] = ["meta": [["path": .string(partial), "value": value]]]
                        if let ts = update["timestamp"] { u["timestamp"] = ts }
                        out.append(["context": .string(context), "updates": [.object(u)]])
                    }
                    i -= 1
                }
            }
        }
        return out
    }
}
