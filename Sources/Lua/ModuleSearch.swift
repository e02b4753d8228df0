import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `require` looks for a script's own modules: its folder only. A module name is a dotted
/// path of plain names (no `/`, `\`, `..`, leading dot, or control characters such as `\0`,
/// which would cut the file name short); the file found, with every symlink resolved, must be a
/// regular file inside the folder (a symlink out of it is refused, not followed).
enum ModuleSearch {
    static func path(for directory: String?) -> String {
        guard let directory else { return "" }
        return "\(directory)/?.lua;\(directory)/?/init.lua"
    }

    /// The source and path of module `name`, or `[nil, "no file 'x'\n\tno file 'y'"]` for
    /// require's message (Lua 5.4's searchers leave the first line's "\n\t" to require).
    static func find(_ name: String, in directory: String?) -> [LuaValue] {
        guard let directory else { return [.nil, .text("no script folder to search (bundled modules only)")] }
        let control = name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
        guard !name.isEmpty, !control, !name.contains("/"), !name.contains("\\"), !name.hasPrefix("."), !name.contains("..") else {
            return [.nil, .text("module names cannot contain '/', '\\', '..' or control characters such as '\\0'")]
        }
        guard let root = realPath(directory) else { return [.nil, .text("no script folder '\(directory)'")] }
        let relative = name.replacingOccurrences(of: ".", with: "/")
        var tried: [String] = []
        for candidate in ["\(directory)/\(relative).lua", "\(directory)/\(relative)/init.lua"] {
            guard let resolved = realPath(candidate) else {
                tried.append("no file '\(candidate)'")
                continue
            }
            guard resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
                tried.append("'\(candidate)' leads outside the script folder (not followed)")
                continue
            }
            guard isRegularFile(resolved), let data = FileManager.default.contents(atPath: resolved) else {
                tried.append("'\(candidate)' is not a regular file")
                continue
            }
            return [.string(LuaString(bytes: Array(data))), .text(candidate)]
        }
        return [.nil, .text(tried.joined(separator: "\n\t"))]
    }

    /// The absolute path with every symlink resolved, or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` is a regular file (not a directory, FIFO or device, which could block).
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFREG
    }
}
