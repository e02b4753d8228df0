import Foundation
import LookoutConfig
import LookoutWire
import Lua

/// `health`: what the `lookout serve` running beside a script reports of its scripts, read-only
/// (see `health.lua`). Scripts cannot reach the status server itself (it acts on alerts), so a
/// script that watches the others (the ready `feedback-on-failure.lua`) reads the status document
/// serve writes into the state folder every 2 s.
public struct HealthModule: LuaModule {
    public let name = "health"
    public var stub: String { String(decoding: PackageResources.health_lua, as: UTF8.self) }
    /// The status file of the state folder.
    let file: String
    /// How old the file may be before serve counts as not running.
    static let freshFor: TimeInterval = 10

    /// The module over the state folder at `paths`.
    public init(paths: LookoutPaths) { file = paths.stateDirectory + "/serve-status.json" }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        let file = self.file
        engine.pushLibrary([
            "serve": { call in
                let failure: (String) -> LuaReturn = { message in
                    call.stack.pushNil()
                    call.engine.push(error: LuaErrorInfo(code: "not_running", message: message, service: "health"), on: call.stack)
                    return .values(2)
                }
                guard let attributes = try? FileManager.default.attributesOfItem(atPath: file),
                      let modified = attributes[.modificationDate] as? Date, let data = FileManager.default.contents(atPath: file)
                else { return failure("no lookout serve has written its status here (\(file))") }
                let age = Date().timeIntervalSince(modified)
                guard age <= Self.freshFor else {
                    return failure("lookout serve is not running: its status is \(Int(age)) s old")
                }
                guard let value = try? JSONParser.parse(data) else { return failure("serve's status file is not JSON") }
                return call.returning(LuaValue(json: value))
            },
        ], prefix: "health.", on: stack)
    }
}
