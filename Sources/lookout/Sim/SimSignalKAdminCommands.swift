import ArgumentParser
import Foundation
import LookoutWire
import Lua

/// `--user NAME:PASSWORD[:ROLE]` of `lookout sim signalk`.
struct SimUserSpec: Sendable {
    var name: String
    var password: String
    var role: String

    /// Parses the option's value; `ROLE` defaults to `admin`.
    init(_ spec: String) throws {
        let parts = spec.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ValidationError("--user takes NAME:PASSWORD[:ROLE], got '\(parts.first ?? "")…'")
        }
        name = parts[0]
        password = parts[1]
        role = parts.count > 2 ? parts[2] : "admin"
        guard ["readonly", "readwrite", "admin"].contains(role) else {
            throw ValidationError("--user \(name): role must be readonly, readwrite or admin, got '\(role)'")
        }
    }
}

/// What `approve` and `deny` share: the running simulator and an admin to log in as.
struct SimSignalKAdminOptions: ParsableArguments {
    @Argument(help: "The device's clientId, as the simulator printed it.")
    var clientId: String

    @Option(help: "The running simulator's URL, e.g. http://127.0.0.1:3000.")
    var url: String

    @Option(help: "An admin user of the simulator, NAME:PASSWORD (one of its --user options).")
    var admin: String

    /// Logs in and sends `PUT /skServer/security/access/requests/<clientId>/<status>` with `body`.
    func decide(_ status: String, body: JSONValue) async throws {
        let spec: SimUserSpec
        do { spec = try SimUserSpec(admin) } catch { throw ValidationError("--admin takes NAME:PASSWORD of an admin user") }
        guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https", base.host != nil else {
            throw ValidationError("--url takes the simulator's http URL, got '\(url)'")
        }
        let http = WireHTTPClient.shared
        let json = [(name: "Content-Type", value: "application/json")]
        let login = try await http.send(
            WireHTTPRequest(
                method: "POST", url: base.appendingPathComponent("signalk/v1/auth/login"), headers: json,
                body: (["username": .string(spec.name), "password": .string(spec.password)] as JSONValue).jsonData),
            timeout: .seconds(10), maximumBodyBytes: 1 << 16)
        guard login.status == 200, let token = (try? JSONValue.parse(login.body))?["token"]?.stringValue else {
            throw HostSetupError(description: "cannot log in to \(base.absoluteString) as \(spec.name): HTTP \(login.status)")
        }
        let path = "skServer/security/access/requests/\(clientId)/\(status)"
        let answer = try await http.send(
            WireHTTPRequest(
                method: "PUT", url: base.appendingPathComponent(path),
                headers: json + [(name: "Authorization", value: "Bearer " + token)], body: body.jsonData),
            timeout: .seconds(10), maximumBodyBytes: 1 << 16)
        let text = String(decoding: answer.body, as: UTF8.self)
        guard answer.status == 200 else {
            throw HostSetupError(description: "the simulator refused (HTTP \(answer.status)): \(text) (is \(clientId) a pending request?)")
        }
        FileHandleOutput.standardOutput.write("\(status) \(clientId): \(text)\n")
    }
}

/// `lookout sim signalk approve CLIENTID`.
struct SignalKSimApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Approve a device's access request on a running `lookout sim signalk --security`.")

    @OptionGroup var target: SimSignalKAdminOptions

    @Option(help: "readonly, readwrite or admin (needed when the device asked for none; what it asked for wins).")
    var permissions: String?

    @Option(help: "Token lifetime, e.g. 1y, 30d, 12h, or NEVER.")
    var expiration: String = "NEVER"

    func validate() throws {
        if let permissions, !["readonly", "readwrite", "admin"].contains(permissions) {
            throw ValidationError("--permissions takes readonly, readwrite or admin, got '\(permissions)'")
        }
    }

    func run() async throws {
        var body: [String: JSONValue] = ["expiration": .string(expiration)]
        if let permissions { body["permissions"] = .string(permissions) }
        try await target.decide("approved", body: .object(body))
    }
}

/// `lookout sim signalk deny CLIENTID`.
struct SignalKSimDenyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Deny a device's access request on a running `lookout sim signalk --security`.")

    @OptionGroup var target: SimSignalKAdminOptions

    func run() async throws {
        try await target.decide("denied", body: [:])
    }
}
