import ArgumentParser
import Foundation
import Lua

/// `lookout stubs DIR`: writes the LuaLS stubs of every module, for editors.
struct StubsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stubs",
        abstract: "Write the LuaLS annotation stubs (---@meta) of every Lookout module into a folder.",
        discussion: "Point lua-language-server at the folder (workspace.library) for completion and type checks.")

    @Argument(help: "The folder to write to (created if missing).")
    var directory: String

    func run() async throws {
        let environment = try HostEnvironment.load()
        let logger = Logger.quiet
        var options = LuaOptions()
        options.name = "stubs"
        let runtime = LuaRuntime(options: options, modules: environment.modules(logger: logger))
        try await runtime.start()
        let stubs = await runtime.withEngine { $0.stubs }
        await runtime.close()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            for (name, text) in stubs.sorted(by: { $0.key < $1.key }) {
                try text.write(toFile: "\(directory)/\(name).lua", atomically: true, encoding: .utf8)
            }
        } catch {
            throw HostSetupError(description: "cannot write stubs to \(directory): \(error.localizedDescription)")
        }
        print("wrote \(stubs.count) stubs to \(directory): \(stubs.keys.sorted().joined(separator: ", "))")
    }
}

import Logging
import LookoutModules

extension Logger {
    /// A logger that drops everything (for commands that only inspect modules).
    static var quiet: Logger {
        var logger = Logger(label: "lookout", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        return logger
    }
}
