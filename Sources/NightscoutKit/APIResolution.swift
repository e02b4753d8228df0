import Foundation

/// Which API a client talks, decided once per client (spec §0: v3 needs a JWT; servers before
/// Nightscout 14 have no v3 at all).
///
/// The configuration's `effectiveAPI` decides from the credentials alone. When that is v3 and
/// v1 fallback is allowed, the first call asks `GET /api/v3/version`: a 404 means the server has
/// no API v3, and the client uses v1 from then on. A network failure decides nothing (the next
/// call asks again).
actor APIResolution {
    private var decided: NightscoutAPIVersion?

    /// The API to use, probing the server at most until one probe answers.
    func api(for client: NightscoutClient) async throws -> NightscoutAPIVersion {
        if let decided { return decided }
        let configuration = client.configuration
        guard let effective = configuration.effectiveAPI else {
            throw NightscoutError.unsupportedCredentials("API v3 needs an access token or JWT, and v1 fallback is off")
        }
        guard effective == .v3, configuration.allowsV1Fallback else {
            decided = effective
            return effective
        }
        let url = configuration.url(path: NightscoutAPIVersion.v3.pathPrefix + "/version")
        let probe = NightscoutRequest(method: "GET", url: url, headers: [
            .init(name: "Accept", value: "application/json"), .init(name: "User-Agent", value: configuration.userAgent)])
        let answer = try await client.send(probe)
        let api: NightscoutAPIVersion = answer.status == 404 ? .v1 : .v3
        decided = api
        return api
    }
}

extension NightscoutClient {
    /// The API this client uses for calls that exist in both (reads and uploads): v3 when the
    /// credentials allow it and the server has it, else v1 when fallback is allowed.
    /// - Throws: `NightscoutError.unsupportedCredentials` when no API fits the credentials, or
    ///   the transport error of the probe.
    public func resolvedAPI() async throws -> NightscoutAPIVersion {
        try await apiResolution.api(for: self)
    }
}
