import Foundation
import LookoutWire

/// Why a Remote 2.0 call failed in a way specific to the protocol. No case carries a secret.
public enum RemoteCommandsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The site has no `/api/v2/remotecommands` (cgm-remote-monitor 15 has none: the protocol
    /// exists only in the clients, spec §5.3). Detected once per client and remembered.
    case notSupported
    /// The command or its id is unusable (e.g. a stored command without `_id`).
    case invalid(String)

    /// `remote commands 2.0 not supported by this site`, or the problem.
    public var description: String {
        switch self {
        case .notSupported: return "remote commands 2.0 not supported by this site"
        case .invalid(let m): return "remote commands 2.0: \(m)"
        }
    }
}

/// Whether a site serves Remote 2.0, decided once per client: a 404 from a collection request
/// to `/api/v2/remotecommands` (probe, list, send, delete) means no; a 2xx answer means yes. A
/// network failure, a 401 or another error decides nothing (the next call asks again).
actor RemoteCommandsSupport {
    private(set) var decided: Bool?

    /// Records what an answer from the endpoint says; returns false for a 404.
    @discardableResult
    func note(status: Int) -> Bool {
        if status == 404 { decided = false; return false }
        if (200...299).contains(status) { decided = true }
        return true
    }
}

extension NightscoutClient {
    /// `/api/v2/remotecommands` (optionally `/{id}`) with the v1 headers.
    func remoteCommandsRequest(_ method: String, id: String? = nil, query: [(String, String)] = [], body: Data? = nil)
        -> NightscoutRequest
    {
        var path = "/api/v2/remotecommands"
        if let id { path += "/" + (id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id) }
        let url = configuration.url(path: path, percentEncodedQuery: query.isEmpty ? nil : NightscoutRequest.encodeQuery(query))
        var headers = V1Query.headers(configuration)
        if body != nil { headers.append(.init(name: "Content-Type", value: "application/json")) }
        return NightscoutRequest(method: method, url: url, headers: headers, body: body)
    }

    /// Sends a Remote 2.0 request, remembering a 404 as "not supported" and throwing for it.
    /// A request for one command (`decides` false) cannot tell a missing endpoint from an
    /// unknown id, so its 404 is an ordinary `NightscoutError.http`.
    func sendRemoteCommands(_ request: NightscoutRequest, decides: Bool = true) async throws -> NightscoutHTTPResponse {
        if await remoteCommandsSupport.decided == false { throw RemoteCommandsError.notSupported }
        let response = try await send(request)
        if decides, !(await remoteCommandsSupport.note(status: response.status)) { throw RemoteCommandsError.notSupported }
        try NightscoutResponse.check(response)
        return response
    }

    /// Whether this site serves Remote 2.0 (spec §5.3), asked once per client with
    /// `GET /api/v2/remotecommands?find[created_at][$gte]=<now>&count=1` and remembered.
    /// - Throws: `NightscoutError` when the probe fails (401, network): nothing is decided then.
    public func supportsRemoteCommands() async throws -> Bool {
        if let decided = await remoteCommandsSupport.decided { return decided }
        do {
            _ = try await sendRemoteCommands(remoteCommandsRequest("GET", query: [
                ("find[created_at][$gte]", NightscoutDate(Date()).isoString), ("count", "1"),
            ]))
            return true
        } catch RemoteCommandsError.notSupported {
            return false
        }
    }

    /// Stores `command` on the site (`POST /api/v2/remotecommands` with `command.encoded()`);
    /// the receiving app is notified when `sendNotification` is true. Not retried: a command
    /// is sent at most once per call.
    /// - Returns: the stored command with its `_id` (the server's answer: an object or a
    ///   one-element array).
    /// - Throws: `RemoteCommandsError.notSupported` (404), `NightscoutError` for other failures.
    public func sendRemoteCommand(_ command: RemoteCommand) async throws -> RemoteCommand {
        let response = try await sendRemoteCommands(remoteCommandsRequest("POST", body: command.encoded()))
        var stored = try Self.remoteCommands(in: response).first ?? command
        if stored.id == nil { throw RemoteCommandsError.invalid("the server did not return the stored command's _id") }
        if stored.otp.isEmpty { stored.otp = command.otp }
        return stored
    }

    /// Commands created at or after `since` (`GET …?find[created_at][$gte]=<ISO>&count=<count>`,
    /// plus `find[status.state][$eq]=<state>` when given), as the server orders them.
    /// - Throws: `RemoteCommandsError.notSupported`, `NightscoutError` (a malformed element is
    ///   `.decoding` naming the field).
    public func fetchRemoteCommands(since: Date, state: CommandState? = nil, count: Int = 50) async throws -> [RemoteCommand] {
        var query = [("find[created_at][$gte]", NightscoutDate(since).isoString), ("count", String(max(1, count)))]
        if let state { query.append(("find[status.state][$eq]", state.rawValue)) }
        return try Self.remoteCommands(in: try await sendRemoteCommands(remoteCommandsRequest("GET", query: query)))
    }

    /// Sets a stored command's status (`PUT /api/v2/remotecommands/{_id}` with
    /// `{"status":{"state":…,"message":…}}`), as the receiving app does.
    public func updateRemoteCommandStatus(id: String, _ status: CommandStatus) async throws {
        guard !id.isEmpty else { throw RemoteCommandsError.invalid("no command id") }
        let j = LoopCommand.jsonString
        let body = "{\"status\":{\"state\":" + j(status.state.rawValue) + ",\"message\":" + j(status.message) + "}}"
        _ = try await sendRemoteCommands(remoteCommandsRequest("PUT", id: id, body: Data(body.utf8)), decides: false)
    }

    /// Deletes the site's commands created since `since` (default a year ago, which is every
    /// command the clients keep): `DELETE /api/v2/remotecommands?find[created_at][$gte]=<ISO>`.
    public func deleteRemoteCommands(since: Date = Date().addingTimeInterval(-365 * 86_400)) async throws {
        _ = try await sendRemoteCommands(remoteCommandsRequest("DELETE", query: [("find[created_at][$gte]", NightscoutDate(since).isoString)]))
    }

    /// The command with `id`, looked up among those created since `createdDate` − 60 s, or nil
    /// when the site no longer has it.
    public func remoteCommand(id: String, createdDate: Date) async throws -> RemoteCommand? {
        try await fetchRemoteCommands(since: createdDate.addingTimeInterval(-60), count: 1000).first { $0.id == id }
    }

    /// Polls the command `id` every `pollInterval` seconds until its state is final or `timeout`
    /// seconds have passed; returns the last state seen (the first poll is immediate).
    /// - Throws: `RemoteCommandsError.invalid` when the site no longer has it, and the errors of
    ///   `fetchRemoteCommands`.
    public func waitForRemoteCommand(id: String, createdDate: Date, timeout: TimeInterval, pollInterval: TimeInterval = 5,
                                     sleep: @Sendable (TimeInterval) async throws -> Void = { s in
                                         try await Task.sleep(nanoseconds: UInt64(max(0, s) * 1_000_000_000))
                                     }) async throws -> RemoteCommand {
        let deadline = Date().addingTimeInterval(max(0, timeout))
        while true {
            guard let command = try await remoteCommand(id: id, createdDate: createdDate) else {
                throw RemoteCommandsError.invalid("the site no longer has command \(id)")
            }
            let left = deadline.timeIntervalSinceNow
            if command.status.state.isFinal || left <= 0 { return command }
            try await sleep(min(max(0.01, pollInterval), left))
        }
    }

    /// The commands in a response body: an array, or one object.
    static func remoteCommands(in response: NightscoutHTTPResponse) throws -> [RemoteCommand] {
        let json: JSONValue
        do { json = try JSONParser.parse(response.body) } catch {
            throw NightscoutError.decoding("remote commands: \(error)")
        }
        switch json {
        case .array(let items): return try items.map(RemoteCommand.init(json:))
        case .object: return [try RemoteCommand(json: json)]
        default: throw NightscoutError.decoding("remote commands: expected an array or an object")
        }
    }
}
