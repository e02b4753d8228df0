import Foundation
import LookoutWire
import GarminKit
import LookoutConfig
import Lua

/// The object behind `local me = garmin.client "me"`: a pooled `GarminClient` (one per profile and
/// token directory, so every script shares one refresh) and the profile's login settings.
final class GarminAccount: LuaObject {
    /// The userdata type.
    static let type = LuaObjectType(name: "lookout.garmin.client", displayName: "garmin client")

    /// The pooled client of this profile, shared by every script.
    public let client: GarminClient
    let connection: GarminConnection

    init(client: GarminClient, connection: GarminConnection) {
        self.client = client
        self.connection = connection
    }

    var luaDescription: String { "garmin client \(connection.label) (\(connection.configuration.domain))" }
    func luaClose(engine: LuaEngine) {}

    /// `self` of a method call.
    static func account(_ call: LuaCall) throws(LuaRaise) -> GarminAccount {
        try call.object(as: GarminAccount.self, type: type)
    }

    /// Runs Kit work for a script: errors become `nil, err` with the Garmin fields.
    static func wait<T: Sendable>(
        _ call: LuaCall, _ what: String, _ operation: @escaping @Sendable () async throws -> T, deliver: @escaping (LuaStack, T) -> Int32
    ) throws(LuaRaise) -> LuaReturn {
        try call.request(
            what,
            {
                do { return try await operation() } catch { throw LuaErrorInfo.garmin(error) }
            }, deliver: deliver)
    }

    /// Pushes a JSON body as a Lua value, or `nil, err`. No data (a 204, an empty body or JSON
    /// null) is an empty table, so a script tells it from an error (`nil, err`) and `assert`
    /// passes: `next(t) == nil` means "no data".
    static func pushJSON(_ body: Data, stack: LuaStack, engine: LuaEngine) -> Int32 {
        if body.isEmpty {
            stack.pushTable()
            return 1
        }
        do {
            try LuaJSONCodec.decode([UInt8](body), onto: stack, worker: LuaStack(engine.L))
        } catch {
            stack.pushNil()
            engine.push(
                error: LuaErrorInfo(code: "invalid_response", message: "the server's answer is not JSON (\(error.message))", service: "garmin"),
                on: stack)
            return 2
        }
        if stack.kind(at: -1) == .lightUserdata {  // json.null: no data
            stack.pop()
            stack.pushTable()
        }
        return 1
    }
}

/// One `GarminClient` per (profile, token directory) for the whole process.
enum GarminClientPool {
    private static let clients = Locked<[String: GarminClient]>([:])

    /// The shared client of a profile, token directory and Connect API, made on first use; throws
    /// if the client cannot be created.
    public static func client(for connection: GarminConnection) throws -> GarminClient {
        let key = connection.label + "#" + (connection.configuration.tokenDirectory?.path ?? "") + "#"
            + connection.configuration.connectAPI.absoluteString
        return try clients.withLock { pool in
            if let c = pool[key] { return c }
            let c = try GarminClient(configuration: connection.configuration)
            pool[key] = c
            return c
        }
    }
}

/// A login waiting for its MFA code (between `login`'s two halves, on the Lua side).
final class GarminPendingMFA: LuaObject {
    static let type = LuaObjectType(name: "lookout.garmin.mfa", displayName: "garmin MFA login")
    /// The login flow's state, needed to finish it with the code.
    public let state: GarminMFAState
    init(state: GarminMFAState) { self.state = state }
    var luaDescription: String { "garmin MFA login (\(state.flow.rawValue))" }
    func luaClose(engine: LuaEngine) {}
}
