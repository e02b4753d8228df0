/// An expected failure as scripts see it: the `err` of `nil, err`.
///
/// In Lua it is a table `{code=…, message=…, retryable=…, status=…, service=…}` whose
/// `tostring` reads like `nightscout: HTTP 401: unauthorized`.
public struct LuaErrorInfo: Error, Sendable, Equatable, CustomStringConvertible {
    /// A short machine-readable kind: `http`, `timeout`, `network`, `auth`, `invalid`, `cancelled`…
    public var code: String
    /// What happened, in plain words.
    public var message: String
    /// Whether trying again later may succeed.
    public var retryable: Bool
    /// The HTTP status, when there was one.
    public var status: Int?
    /// The service (`nightscout`, `signalk`…), when the error comes from a client.
    public var service: String?
    /// More fields for the script (e.g. `retry_after`).
    public var details: [String: LuaValue]

    /// Creates an error description.
    public init(
        code: String, message: String, retryable: Bool = false, status: Int? = nil, service: String? = nil,
        details: [String: LuaValue] = [:]
    ) {
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
        self.service = service
        self.details = details
    }

    /// Maps any Swift error; errors that know their Lua form conform to `LuaErrorConvertible`.
    public init(_ error: any Error) {
        if let info = error as? LuaErrorInfo {
            self = info
        } else if let convertible = error as? any LuaErrorConvertible {
            self = convertible.luaError
        } else if error is CancellationError {
            self.init(code: "cancelled", message: "cancelled")
        } else {
            self.init(code: "internal", message: String(describing: error))
        }
    }

    public var description: String {
        Self.text(service: service, status: status.map(String.init), message: message)
    }

    /// `service: HTTP 403: message`, without saying a part twice: a message that already names
    /// the status (`HTTP 403: …`, `not authorised (HTTP 401)`) or starts with the service's name
    /// gets no second copy.
    public static func text(service: String?, status: String?, message: String) -> String {
        var text = ""
        if let service, !message.hasPrefix(service + ":"), !message.lowercased().hasPrefix(service.lowercased() + ":") {
            text += service + ": "
        }
        if let status, !message.contains("HTTP \(status)") { text += "HTTP \(status): " }
        return text + message
    }
}

/// A Swift error that knows how scripts should see it.
public protocol LuaErrorConvertible: Error {
    /// The error as a script sees it.
    var luaError: LuaErrorInfo { get }
}
