import Foundation

/// Which script files `serve` runs: `.lua` files given directly, and the `.lua` files directly
/// inside given folders (sorted; hidden files, `_`-prefixed helpers and `*.scenario.lua` test
/// scenarios are left out, and subfolders such as `scenarios/` are not entered), with their
/// modification times for change detection.
public struct ScriptDiscovery: Sendable {
    /// Files and folders to serve.
    public let paths: [String]

    /// Serves `paths`.
    public init(paths: [String]) { self.paths = paths }

    /// Script path → modification stamp (seconds and size), for what exists now.
    public func scan() -> [String: ScriptStamp] {
        var result: [String: ScriptStamp] = [:]
        let manager = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                let names = (try? manager.contentsOfDirectory(atPath: path)) ?? []
                for name in names.sorted() where Self.isScript(name) {
                    let file = (path as NSString).appendingPathComponent(name)
                    if let stamp = ScriptStamp(file: file) { result[file] = stamp }
                }
            } else if let stamp = ScriptStamp(file: path) {
                result[path] = stamp
            }
        }
        return result
    }

    /// Whether a file found in a served folder is a script: `.lua`, not hidden, not a `_` helper,
    /// not a `lookout test` scenario (`night.scenario.lua`).
    public static func isScript(_ name: String) -> Bool {
        name.hasSuffix(".lua") && !name.hasPrefix(".") && !name.hasPrefix("_") && !name.hasSuffix(".scenario.lua")
    }

    /// The paths that do not exist (for a clear message at start).
    public func missing() -> [String] {
        paths.filter { !FileManager.default.fileExists(atPath: $0) }
    }
}

/// A file's modification time and size: when either changes, the script is reloaded.
public struct ScriptStamp: Sendable, Equatable {
    /// Modification time in nanoseconds.
    public let modified: Int64
    /// Size in bytes.
    public let size: Int64
    /// The settings a bound piece of work runs with (its profile's, as a hash): when they
    /// change (the profile catalogue), the work restarts.
    public var settings = 0

    /// The stamp of `file`, or nil if it cannot be read.
    public init?(file: String) {
        var info = stat()
        guard stat(file, &info) == 0 else { return nil }
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
        size = Int64(info.st_size)
    }
}
