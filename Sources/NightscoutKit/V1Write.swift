import Foundation

/// v1 upload requests (spec §2.2–§2.5, §5.4): JSON bodies, v1 authentication headers.
public enum V1Write {
    /// `POST /api/v1/entries` with an array of entries.
    public static func postEntries(_ entries: [Entry], configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        try request("POST", "/entries", body: entries, configuration)
    }

    /// `POST /api/v1/treatments` with an array of treatments.
    public static func postTreatments(_ treatments: [Treatment], configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        try request("POST", "/treatments", body: treatments, configuration)
    }

    /// `PUT /api/v1/treatments` with one treatment (upsert; needs `_id` to update).
    public static func putTreatment(_ treatment: Treatment, configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        try request("PUT", "/treatments", body: treatment, configuration)
    }

    /// `POST /api/v1/devicestatus` with an array of statuses.
    public static func postDeviceStatus(_ statuses: [DeviceStatus], configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        try request("POST", "/devicestatus", body: statuses, configuration)
    }

    /// `POST /api/v1/profile` with an array of profile sets.
    public static func postProfiles(_ profiles: [ProfileSet], configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        try request("POST", "/profile", body: profiles, configuration)
    }

    /// `DELETE /api/v1/treatments/{id}`.
    public static func deleteTreatment(id: String, configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        guard !id.isEmpty, id != "*" else { throw NightscoutError.invalidRequest("refusing to delete without a specific id") }
        let url = configuration.url(path: NightscoutAPIVersion.v1.pathPrefix + "/treatments/" + NightscoutRequest.percentEncode(id))
        return NightscoutRequest(method: "DELETE", url: url, headers: V1Query.headers(configuration))
    }

    private static func request<B: Encodable>(_ method: String, _ path: String, body: B,
                                              _ configuration: NightscoutConfiguration) throws -> NightscoutRequest {
        let data: Data
        do { data = try JSONEncoder().encode(body) }
        catch { throw NightscoutError.invalidRequest("cannot encode body: \(error)") }
        let url = configuration.url(path: NightscoutAPIVersion.v1.pathPrefix + path)
        return NightscoutRequest(method: method, url: url,
                                 headers: V1Query.headers(configuration) + [.init(name: "Content-Type", value: "application/json")],
                                 body: data)
    }
}
