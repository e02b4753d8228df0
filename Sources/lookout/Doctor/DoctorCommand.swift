import ArgumentParser
import Foundation
import LookoutWire
import LookoutAutomation
import LookoutConfig
import LookoutModules
import ReadyScripts

/// `lookout doctor`: checks the configuration, the state database, the outbox and every profile's
/// server, and writes a redacted support bundle on request.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, state, outbox and each profile's connection and credentials.",
        discussion: """
            Each profile's server is reached with its credentials: Nightscout sites report their
            version and the age of the newest CGM entry (a warning after 15 minutes), Signal K
            servers their identity and whether the token is accepted. Each [notify.NAME] channel is
            checked as sending would check it (nothing is sent), and each [scripts."NAME".settings]
            against the settings the script declares. Exit status: 0 when nothing
            failed (warnings allowed), 1 when a check failed, 2 for a usage error.
            """)

    @Option(help: "Write a redacted support bundle (JSON) to this file, for a bug report.")
    var bundle: String?

    @Option(help: "Seconds each network check may take.")
    var timeout: Double = 10

    @Flag(help: "Print the findings as JSON.")
    var json = false

    func validate() throws {
        guard timeout > 0, timeout <= 300 else { throw ValidationError("--timeout takes 1 to 300 seconds") }
    }

    func run() async throws {
        let paths = LookoutPaths.resolve()
        let environment = ProcessInfo.processInfo.environment
        let config = Result { () throws(ConfigError) -> HostConfig in
            let config = try HostConfig.load(paths: paths)
            try ServiceProfileSchema.validate(config)
            return config
        }
        var doctor = Doctor(paths: paths, config: config, environment: environment)
        // A ready script's settings are checked against the copy in the binary when no file is found.
        doctor.scriptSource = { file, config in
            Doctor.sourceInServeFolders(file, config: config) ?? ReadyScripts.all[file].map { String(decoding: $0, as: UTF8.self) }
        }
        doctor.timeout = timeout
        let width = 16
        let terminal = isatty(1) == 1 && !json
        if !json { print("Lookout doctor: \(paths.configFile)") }
        let checks = await doctor.run { check in
            guard !json else { return }
            let subject = check.subject.padding(toLength: max(width, check.subject.count), withPad: " ", startingAt: 0)
            print("  " + Self.label(check.status, color: terminal) + "  " + subject + "  " + check.detail)
        }
        let secrets = (try? config.get()).map { SupportBundle.reachableSecrets(config: $0, environment: environment) } ?? []
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(Redaction.text(String(decoding: try encoder.encode(checks), as: UTF8.self), secrets: secrets))
        } else {
            let failures = checks.filter { $0.status == .failure }.count
            let warnings = checks.filter { $0.status == .warning }.count
            print(failures + warnings == 0 ? "All good." : "\(failures) failed, \(warnings) warning\(warnings == 1 ? "" : "s").")
        }
        if let bundle {
            let made = await SupportBundle.make(doctor: doctor, checks: checks, version: LookoutVersion.current)
            let text = made.json(secrets: secrets)
            guard FileManager.default.createFile(atPath: bundle, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw HostSetupError(description: "cannot write the support bundle to \(bundle)")
            }
            if !json { print("Support bundle (secrets removed): \(bundle)") }
        }
        if checks.contains(where: { $0.status == .failure }) { throw ExitCode(1) }
    }

    static func label(_ status: DoctorCheck.Status, color: Bool) -> String {
        let text = status.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        guard color else { return text }
        let code = [DoctorCheck.Status.ok: "32", .warning: "33", .failure: "31", .skipped: "90"][status]!
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }
}
