import Foundation
import LookoutSim

/// What `lookout sim signalk --state DIR` keeps between runs, in `DIR/signalk.json` (0600: it holds
/// the signing key): the port and what its tokens depend on (the key and the approved devices), so
/// a restart has the same URL and the tokens Lookout stored for the profile stay valid.
struct SimSignalKState {
    private struct Document: Codable {
        var port: Int
        var security: SignalKSecurityState
    }

    /// The state file.
    let file: String
    /// The port of the last run, if any.
    let port: Int?
    /// The key and devices of the last run (a fresh key the first time).
    let security: SignalKSecurityState

    /// The state in `folder` (created 0700 when missing).
    init(folder given: String) throws {
        file = try SimState.prepare(folder: given) + "/signalk.json"
        if let data = FileManager.default.contents(atPath: file) {
            guard let document = try? JSONDecoder().decode(Document.self, from: data) else {
                throw HostSetupError(description: "--state: \(file) is not a Signal K simulator state file (remove it to start afresh)")
            }
            port = document.port
            security = document.security
        } else {
            port = nil
            security = SignalKSecurityState()
        }
    }

    /// Records the port and security state for the next run (0600, replaced atomically).
    func save(port: Int, security: SignalKSecurityState) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = file + ".tmp"
        guard let data = try? encoder.encode(Document(port: port, security: security)),
              FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]),
              rename(temporary, file) == 0
        else { throw HostSetupError(description: "--state: cannot write \(file)") }
    }
}
