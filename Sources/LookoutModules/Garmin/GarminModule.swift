import Foundation
import GarminKit
import LookoutConfig
import Lua

/// `garmin`: Garmin Connect accounts from config profiles (`garmin.client "me"`), with methods
/// for the daily data (heart rate, sleep, steps, …), activities and any Connect API path.
/// Methods wait without blocking other tasks and return `nil, err` on failure. See
/// `Stubs/garmin.lua` for the script-facing documentation.
public struct GarminModule: LuaModule {
    public let name = "garmin"
    public var stub: String { String(decoding: PackageResources.garmin_lua, as: UTF8.self) }

    let config: HostConfig
    let paths: LookoutPaths
    let environment: [String: String]

    /// A module that finds profiles in `config`, their secrets in `environment`, and keeps login tokens under `paths`' state folder by default.
    public init(config: HostConfig, paths: LookoutPaths, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.config = config
        self.paths = paths
        self.environment = environment
    }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: GarminAccount.type, methods: GarminAccount.methods)
        engine.register(type: GarminPendingMFA.type, methods: [:])
        try Self.installLogin(engine: engine, stack: stack)
        let config = self.config, paths = self.paths, environment = self.environment
        engine.pushLibrary(
            [
                "client": { call in
                    let name = try call.string(1)
                    do {
                        let connection = try GarminConnection.profile(name, config: config, paths: paths, environment: environment)
                        let client = try GarminClientPool.client(for: connection)
                        call.push(object: GarminAccount(client: client, connection: connection), type: GarminAccount.type)
                        return .values(1)
                    } catch let raise as LuaRaise {
                        throw raise
                    } catch {
                        return call.failure(LuaErrorInfo.garmin(error))
                    }
                }
            ], prefix: "garmin.", on: stack)
    }

    /// `me:login([opts])` is written in Lua so that an MFA handler (a Lua function) runs in the
    /// caller's task between the two Swift halves (`_login_start`, `_login_finish`).
    static func installLogin(engine: LuaEngine, stack: LuaStack) throws {
        try stack.load(PackageResources.garmin_login_lua, name: "=[lookout] garmin.login", what: "garmin.login")
        guard stack.ensure(3) else { throw LuaRaise("garmin.login: stack overflow") }
        stack.rawField(GarminAccount.type.name, of: LuaStack.registry)
        stack.rawField("__index", of: -1)
        stack.remove(at: -2)
        try stack.protectedCall(arguments: 1, results: 0, what: "garmin.login")
    }
}
