/// GarminKit: a Garmin Connect client modelled on Python garth (contract: shared/specs/garmin.md).
///
/// - SSO login: the mobile JSON flow (default) and the classic widget form flow (fallback), MFA
///   through an async handler or in two phases (``GarminLoginResult/needsMFA(_:)``).
/// - OAuth1 preauthorized token and the OAuth1 → OAuth2 exchange, signed with HMAC-SHA1
///   (``OAuth1Signer``), tokens stored in garth's directory format (``GarminTokenStore``).
/// - ``GarminClient``: automatic refresh before expiry (one shared exchange for concurrent
///   callers), the Connect API (generic calls and typed helpers), garth's retry rules.
///
/// GarminKit knows nothing of Lua. Errors are ``GarminError``; their descriptions never contain a
/// password, token, ticket or secret.
public enum GarminKit {
    /// `CLIENT_ID` of the mobile SSO flow.
    public static let clientID = "GCM_ANDROID_DARK"
    /// `audience` sent on the exchange made during a mobile-flow login (never on refresh).
    public static let loginAudience = "GARMIN_CONNECT_MOBILE_ANDROID_DI"
    /// `User-Agent` of the preauthorized and exchange requests.
    public static let oauthUserAgent = "com.garmin.android.apps.connectmobile"
    /// The browser `User-Agent` of SSO page requests.
    public static let ssoUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
    /// Default `User-Agent` of Connect API requests.
    public static let apiUserAgent = "GCM-iOS-5.22.1.4"

    /// The `service` / `login-url` identifier of the mobile flow (built from the domain, never
    /// from a transport override).
    public static func mobileServiceURL(domain: String) -> String {
        "https://mobile.integration.\(domain)/gcm/android"
    }

    /// The `login-url` / `gauthHost` identifier of the widget flow (`https://sso.{domain}/sso/embed`).
    public static func widgetEmbedURL(domain: String) -> String { "https://sso.\(domain)/sso/embed" }
}
