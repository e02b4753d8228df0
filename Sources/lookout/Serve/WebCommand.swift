import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutModules
import LookoutStore

/// `lookout web login|logout`: signing people in to the web view of `serve` and out again.
struct WebCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web",
        abstract: "Sign in to the web view of `lookout serve` (login prints a one-time link; logout --all ends every session).",
        subcommands: [WebLoginCommand.self, WebLogoutCommand.self])
}

/// `lookout web login`: prints a one-time sign-in link.
struct WebLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Print a one-time link that signs a browser in to the web view (valid 10 minutes, once).",
        discussion: """
            The link's code is used up by the first browser that opens it; that browser gets a session \
            cookie (HttpOnly, SameSite=Strict) for 12 hours. The link points at [serve] public_url, else at \
            the running serve's web listener ([serve] web) or status endpoint, else at 127.0.0.1 and the \
            port of [serve] web or status_port.
            """)

    func run() async throws {
        let environment = try HostEnvironment.load()
        let sessions = WebSessions(stateDirectory: environment.paths.stateDirectory)
        let code: String
        do { code = try sessions.makeLoginCode() } catch { throw HostSetupError(description: "cannot make a sign-in code: \(error)") }
        print(WebLoginCommand.base(environment) + "/web/login?code=" + code)
    }

    /// Where the web view is: `[serve] public_url`, else the running serve's web listener or
    /// endpoint, else the configured `[serve] web` or status port.
    static func base(_ environment: HostEnvironment) -> String {
        if var url = environment.config.servePublicURL {
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        if let data = FileManager.default.contents(atPath: ServeStatus.file(environment.paths)),
           let document = try? HealthDocument.decode(data) {
            if let web = document.info["web_url"] { return web }
            if let status = document.info["status_url"], status.hasSuffix("/status") { return String(status.dropLast("/status".count)) }
        }
        if let web = environment.config.serveWeb, web.port != 0 {
            return "\(web.tls ? "https" : "http")://127.0.0.1:\(web.port)"
        }
        return "http://127.0.0.1:\(environment.config.serveStatusPort)"
    }
}

/// `lookout web logout --all`: ends every session.
struct WebLogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "End every web view session and forget unused sign-in links.")

    @Flag(help: "End every session (required: sessions have no names to pick one by).")
    var all = false

    func validate() throws {
        guard all else { throw ValidationError("say --all: `lookout web logout --all` ends every session (a browser signs itself out with its Sign out button)") }
    }

    func run() async throws {
        let environment = try HostEnvironment.load()
        let count: Int
        do { count = try WebSessions(stateDirectory: environment.paths.stateDirectory).revokeAll() } catch {
            throw HostSetupError(description: "cannot end the sessions: \(error)")
        }
        print("ended \(count) session(s); open pages lose their connection and must sign in again")
    }
}
