import Foundation

/// What `lookout sim nightscout --state DIR` keeps between runs besides the data: the port and
/// the token subjects' ids (a token is derived from its subject's id), in `DIR/sim.json`; the
/// tokens themselves in `DIR/NAME.token` (0600), for a profile's `token_file`.
struct SimState {
    /// A token subject: its id and roles.
    struct Subject: Codable, Equatable {
        var id: String
        var roles: [String]
    }

    private struct Document: Codable {
        var port: Int
        var subjects: [String: Subject]
    }

    /// The folder (absolute).
    let folder: String
    /// The port of the last run, if any.
    let port: Int?
    /// The subjects of the last run.
    let subjects: [String: Subject]

    /// The state in `folder` (created 0700 when missing).
    init(folder given: String) throws {
        folder = try Self.prepare(folder: given)
        let file = folder + "/sim.json"
        if let data = FileManager.default.contents(atPath: file) {
            guard let document = try? JSONDecoder().decode(Document.self, from: data) else {
                throw HostSetupError(description: "--state: \(file) is not a simulator state file (remove it to start afresh)")
            }
            port = document.port
            subjects = document.subjects
        } else {
            port = nil
            subjects = [:]
        }
    }

    /// The absolute path of a `--state` folder, created 0700 when missing.
    static func prepare(folder given: String) throws -> String {
        let absolute = given.hasPrefix("/") ? given : FileManager.default.currentDirectoryPath + "/" + given
        let folder = URL(fileURLWithPath: absolute).standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw HostSetupError(description: "--state: cannot create \(folder): \(error.localizedDescription)")
        }
        return folder
    }

    /// Writes `token` to `DIR/NAME.token` (0600, replaced atomically); returns the path.
    func writeToken(_ token: String, name: String) throws -> String {
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        let path = folder + "/" + safe + ".token"
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]),
              rename(temporary, path) == 0
        else { throw HostSetupError(description: "--state: cannot write \(path)") }
        return path
    }

    /// Records the port and subjects for the next run.
    func save(port: Int, subjects: [String: Subject]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            try encoder.encode(Document(port: port, subjects: subjects)).write(to: URL(fileURLWithPath: folder + "/sim.json"), options: .atomic)
        } catch {
            throw HostSetupError(description: "--state: cannot write \(folder)/sim.json: \(error.localizedDescription)")
        }
    }
}
