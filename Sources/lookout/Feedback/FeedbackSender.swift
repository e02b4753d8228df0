import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import NorthlightKit

/// What `lookout feedback` and `lookout bug` share: the profile, sending, and the report.
struct FeedbackSender {
    let environment: HostEnvironment
    let connection: NorthlightConnection

    /// The profile `name` (or the default one); `verbose` logs each HTTP exchange on standard error.
    init(profile name: String?, verbose: Bool = false) throws {
        environment = try HostEnvironment.load()
        _ = environment.bootstrapLogging(verbose: verbose)
        do {
            connection = try NorthlightConnection.profile(name, config: environment.config, appVersion: LookoutVersion.current)
        } catch {
            throw HostSetupError(description: "\(error)")
        }
    }

    /// Sends (or queues) and prints the outcome; a final failure exits with status 1.
    func send(_ prepare: @Sendable (NorthlightClient) async throws -> NorthlightSubmission, what: String) async throws {
        let store: any StateBackend
        do { store = try StateBackends.shared(paths: environment.paths) } catch { throw HostSetupError(description: error.description) }
        do {
            let client = try await connection.client()
            let submission = try await prepare(client)
            switch try await NorthlightSubmissions.submit(submission, connection: connection, client: client, store: store,
                                                          source: "lookout \(what)") {
            case .sent(let id):
                print("sent \(what) \(id)")
                let report = try await NorthlightSubmissions.flush(connection: connection, store: store)
                if report.sent > 0 { print("also sent \(report.sent) queued submission(s)") }
            case .queued(let item, let reason):
                print("queued in the outbox as \(item.identifier) (\(reason.description.replacingOccurrences(of: "Northlight: ", with: "")))")
                print("it is sent by the next `lookout feedback`/`lookout bug` or `lookout outbox retry \(item.identifier)`")
            }
        } catch let error as NorthlightError {
            FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// Reads a value given as an option, or asks for it when allowed.
    static func value(_ given: String?, ask: Bool, _ read: () -> String?) -> String? {
        if let given { return given }
        return ask ? read() : nil
    }
}
