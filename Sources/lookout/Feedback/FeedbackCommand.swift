import ArgumentParser
import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import NorthlightKit

/// `lookout feedback`: send feedback to a Northlight project.
struct FeedbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Send feedback to a Northlight project (a form, or options).",
        discussion: """
            Asks for what the options do not give: title, description (several lines, ending with an
            empty line), category and e-mail. With --no-input nothing is asked. The project is the
            profile [northlight.NAME] (--profile; default: [northlight.default] or the only one).
            When the network fails or the server is busy (429, 5xx) the feedback waits in the outbox.
            """)

    @Option(help: "The [northlight.NAME] profile.") var profile: String?
    @Option(help: "Title (at most 255 characters).") var title: String?
    @Option(help: "Description.") var description: String?
    @Option(help: "Category, e.g. UI/UX.") var category: String?
    @Option(help: "Your e-mail (optional).") var email: String?
    @Flag(name: .customLong("no-input"), help: "Never ask; missing required fields are an error.") var noInput = false
    @Flag(name: .shortAndLong, help: "Show each HTTP exchange (method, URL without secrets, status, time) on standard error.")
    var verbose = false

    func run() async throws {
        let sender = try FeedbackSender(profile: profile, verbose: verbose)
        let form = FeedbackForm()
        let ask = !noInput && (title == nil || description == nil)
        let title = FeedbackSender.value(self.title, ask: ask) { form.line("Title") } ?? ""
        let description = FeedbackSender.value(self.description, ask: ask) { form.text("Description") } ?? ""
        let category = FeedbackSender.value(self.category, ask: ask) { form.line("Category (optional)") }
        let email = FeedbackSender.value(self.email, ask: ask) { form.line("E-mail (optional)", default: sender.connection.email) }
        try await sender.send({ client in
            try await client.prepareFeedback(title: title, description: description, category: category, email: email)
        }, what: "feedback")
    }
}

/// `lookout bug`: report a bug to a Northlight project, optionally with a diagnostics summary.
struct BugCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bug",
        abstract: "Report a bug to a Northlight project (a form, or options).",
        discussion: """
            Asks for what the options do not give: title, description, severity (low, medium, high,
            critical; default medium), steps to reproduce and e-mail, then offers to attach a
            diagnostics summary (Lookout's version, the OS, config profile names, outbox depth and
            last errors; no URLs, keys or settings), shown before it is sent. With --no-input
            nothing is asked and the summary is attached only with --diagnostics.
            """)

    @Option(help: "The [northlight.NAME] profile.") var profile: String?
    @Option(help: "Title (at most 255 characters).") var title: String?
    @Option(help: "Description.") var description: String?
    @Option(help: "low, medium, high or critical.") var severity: String?
    @Option(help: "Steps to reproduce.") var steps: String?
    @Option(help: "Your e-mail (optional).") var email: String?
    @Flag(inversion: .prefixedNo, help: "Attach the diagnostics summary (asked when not given).") var diagnostics: Bool?
    @Flag(name: .customLong("no-input"), help: "Never ask; missing required fields are an error.") var noInput = false
    @Flag(name: .shortAndLong, help: "Show each HTTP exchange (method, URL without secrets, status, time) on standard error.")
    var verbose = false

    func validate() throws {
        if let severity, NorthlightSeverity(rawValue: severity.lowercased()) == nil {
            throw ValidationError("--severity takes low, medium, high or critical, got '\(severity)'")
        }
    }

    func run() async throws {
        let sender = try FeedbackSender(profile: profile, verbose: verbose)
        let form = FeedbackForm()
        let ask = !noInput && (title == nil || description == nil)
        let title = FeedbackSender.value(self.title, ask: ask) { form.line("Title") } ?? ""
        var description = FeedbackSender.value(self.description, ask: ask) { form.text("Description") } ?? ""
        var severity = NorthlightSeverity.medium
        if let text = FeedbackSender.value(self.severity, ask: ask, { form.line("Severity (low, medium, high, critical)", default: "medium") }) {
            do { severity = try NorthlightSeverity.parse(text) } catch {
                FileHandle.standardError.write(Data("lookout: \(error.description)\n".utf8))
                throw ExitCode(1)
            }
        }
        let steps = FeedbackSender.value(self.steps, ask: ask) { form.text("Steps to reproduce (optional)") }
        let email = FeedbackSender.value(self.email, ask: ask) { form.line("E-mail (optional)", default: sender.connection.email) }
        if diagnostics != false && (diagnostics == true || ask) {
            let store = try? StateBackends.shared(paths: sender.environment.paths)
            let summary = await DiagnosticsSummary.collect(version: LookoutVersion.current, config: sender.environment.config, store: store,
                                                           secrets: [sender.connection.configuration.apiKey])
            FileHandle.standardError.write(Data("Diagnostics summary:\n\(summary.text)\n".utf8))
            if diagnostics == true || form.confirm("Attach this summary?", default: true) {
                description += "\n\n--- diagnostics ---\n" + summary.text
            }
        }
        let chosen = severity
        let body = description
        try await sender.send({ client in
            try await client.prepareBug(title: title, description: body, severity: chosen, stepsToReproduce: steps, email: email)
        }, what: "bug")
    }
}
