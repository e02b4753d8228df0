import Foundation

/// An MFA code provider: called exactly once when the account needs a code.
public typealias GarminMFAHandler = @Sendable () async throws -> String

/// What `login` returns.
public enum GarminLoginResult: Sendable {
    /// Logged in: both tokens.
    case success(OAuth1Token, OAuth2Token)
    /// The account needs an MFA code and no handler was given: pass the state and the code to
    /// `resumeLogin`.
    case needsMFA(GarminMFAState)
}

/// The in-memory state of a login waiting for its MFA code (same cookie session, login query,
/// MFA method and flow). It cannot be persisted.
public struct GarminMFAState: Sendable {
    /// The flow that asked for the code.
    public enum Flow: String, Sendable {
        /// Mobile JSON flow.
        case mobile
        /// Widget form flow.
        case widget
    }
    /// The flow that asked for the code.
    public let flow: Flow
    /// The MFA method (`email`, `sms`, …) for the mobile flow.
    public let method: String
    let cookies: GarminCookieJar
    /// The URL of the page that asked for the code.
    let referer: URL?
}
