import Foundation

/// The OAuth1 consumer (the app's key and secret) that signs preauthorized and exchange requests.
public struct OAuthConsumer: Sendable, Equatable, Codable, CustomStringConvertible {
    /// `consumer_key`.
    public var key: String
    /// `consumer_secret` (never printed).
    public var secret: String

    /// Creates a consumer.
    public init(key: String, secret: String) { self.key = key; self.secret = secret }

    enum CodingKeys: String, CodingKey {
        case key = "consumer_key"
        case secret = "consumer_secret"
    }

    /// Masks the secret.
    public var description: String { "OAuthConsumer(key: ***, secret: ***)" }
}
