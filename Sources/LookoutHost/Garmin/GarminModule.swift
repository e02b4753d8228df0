import CLua
import Foundation
import GarminKit
import Lua
import LuaShim

/// `garmin`: Garmin Connect accounts from config profiles (`garmin.client "me"`), with methods
/// for the daily data (heart rate, sleep, steps, …), activities and any Connect API path.
/// Methods wait without blocking other tasks and return `nil, err` on failure. See
/// `Stubs/garmin.lua` for the script-facing documentation.
struct GarminModule: LuaModule {
    let name = "garmin"
    var stub: String { String(decoding: PackageResources.garmin_lua, as: UTF8.self) }

    let config: HostConfig
    let paths: LookoutPaths
    let environment: [String: String]

    init(config: HostConfig, paths: LookoutPaths, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.config = config
        self.paths = paths
        self.environment = environment
    }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
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
    static let loginSource = """
        local methods = ...
        if methods.login then return end
        local start, finish = methods._login_start, methods._login_finish
        methods._login_start, methods._login_finish = nil, nil
        local type, error, tostring = type, error, tostring
        methods.login = function(self, opts)
          if opts ~= nil and type(opts) ~= "table" then
            error("bad argument #1 to 'login' (table expected, got " .. type(opts) .. ")", 2)
          end
          local handler = opts and opts.mfa
          if handler ~= nil and type(handler) ~= "function" then
            error("bad argument #1 to 'login' (opts.mfa: expected a function, got " .. type(handler) .. ")", 2)
          end
          local pending, err = start(self, handler ~= nil)
          if pending == nil then return nil, err end
          if pending == true then return true end
          local code = handler()
          if code == nil then code = "" end  -- no code: finish answers nil, err (mfa_required)
          if type(code) == "number" then code = string.format("%d", code) end
          if type(code) ~= "string" then
            error("garmin login: the MFA handler must return the code as a string, got " .. type(code), 2)
          end
          return finish(self, pending, code)
        end
        """

    static func installLogin(engine: LuaEngine, stack: LuaStack) throws {
        let L = stack.L
        var source = loginSource
        let status = source.withUTF8 { buffer in
            buffer.withMemoryRebound(to: CChar.self) { shim_loadtext(L, $0.baseAddress, $0.count, "=[lookout] garmin.login") }
        }
        guard status == LUA_OK else { throw LuaRaise("garmin.login: \(stack.string(at: -1) ?? "cannot load")") }
        guard stack.ensure(3) else { throw LuaRaise("garmin.login: stack overflow") }
        stack.rawField(GarminAccount.type.name, of: SHIM_REGISTRYINDEX)
        stack.rawField("__index", of: -1)
        shim_remove(L, -2)
        guard shim_pcall_traceback(L, 1, 0) == LUA_OK else {
            defer { stack.pop() }
            throw LuaRaise("garmin.login: \(stack.string(at: -1) ?? "cannot install")")
        }
    }
}
