import Foundation
import LookoutWire

/// The seed's facade (`Northlight.configure(apiKey:)`, `Northlight.shared`), thin over one
/// `NorthlightClient`: for apps that want one project per process. Everything else in
/// NorthlightKit takes a client explicitly; prefer that where more than one project is used.
///
/// ```swift
/// try Northlight.configure(apiKey: key)
/// try await Northlight.shared().setUserEmail("user@example.com")
/// let id = try await Northlight.submitFeedback(title: "Dark mode", description: "Please")
/// ```
public enum Northlight {
    /// The configured client.
    private static let slot = Locked<NorthlightClient?>(nil)

    /// Configures the process's client (replacing an earlier one) and returns it.
    @discardableResult
    public static func configure(apiKey: String, baseURL: URL = NorthlightConfiguration.defaultBaseURL,
                                 appVersion: String = "0.0.0") throws(NorthlightError) -> NorthlightClient {
        let client = try NorthlightClient.configure(apiKey: apiKey, baseURL: baseURL, appVersion: appVersion)
        slot.withLock { $0 = client }
        return client
    }

    /// Uses `client` as the process's client (tests, custom transports); nil forgets it.
    public static func use(_ client: NorthlightClient?) { slot.withLock { $0 = client } }

    /// The configured client.
    /// - Throws: `NorthlightError.invalidAPIKey` when `configure` was not called.
    public static func shared() throws(NorthlightError) -> NorthlightClient {
        guard let client = slot.withLock({ $0 }) else { throw .invalidAPIKey }
        return client
    }

    /// `shared().submitFeedback(…)`.
    public static func submitFeedback(title: String, description: String, category: String? = nil) async throws(NorthlightError)
        -> String {
        try await shared().submitFeedback(title: title, description: description, category: category)
    }

    /// `shared().reportBug(…)`.
    public static func reportBug(title: String, description: String, severity: NorthlightSeverity = .medium,
                                 stepsToReproduce: String? = nil) async throws(NorthlightError) -> String {
        try await shared().reportBug(title: title, description: description, severity: severity, stepsToReproduce: stepsToReproduce)
    }

    /// `shared().vote(feedbackID:)` with the identifier set on the shared client.
    public static func vote(feedbackId: String) async throws(NorthlightError) -> Int {
        try await shared().vote(feedbackID: feedbackId)
    }
}
