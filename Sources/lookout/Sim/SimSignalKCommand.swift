import ArgumentParser
import Foundation
import LookoutSim
import LookoutWire
import Lua

/// `lookout sim signalk`.
struct SignalKSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signalk",
        abstract: "A Signal K server on 127.0.0.1 that behaves like signalk-server (discovery, REST, stream).",
        discussion: """
            Prints its URLs and a config profile to paste, then serves until Ctrl-C. The data comes from \
            a generated boat sailing a loop off Helsinki (position, SOG/COG/heading, wind, depth, \
            water temperature, battery, an anchor alarm that raises and clears), or from a file of \
            recorded deltas (one JSON delta per line) with --playback.

            With --security, REST and stream need a token: log in as a --user, or ask for access as a \
            device (POST /signalk/v1/access/requests). Pending access requests are printed; approve or \
            deny them from another terminal with `lookout sim signalk approve|deny CLIENTID --url URL \
            --admin NAME:PASSWORD` (an admin --user), or through the admin API as on signalk-server. \
            With --security the profile it prints asks for access itself (`access = {…}`); with --state \
            DIR the port, the signing key and the approved devices are kept (DIR/signalk.json, 0600), \
            so a restart has the same URL and the tokens Lookout stored stay valid.
            """,
        subcommands: [SignalKSimApproveCommand.self, SignalKSimDenyCommand.self])

    @Option(help: "Port to listen on (0 = any free port).")
    var port: Int = 0

    @Option(help: "Updates per second (0.01 to 200).")
    var rate: Double = 1

    @Option(help: "Seed of the generated boat.")
    var seed: UInt64 = 1

    @Option(help: "MMSI of the self vessel.")
    var mmsi: String = "230099999"

    @Option(help: "Play recorded deltas from this file (one JSON delta per line) instead of the boat.")
    var playback: String?

    @Flag(help: "Turn security on: tokens, login, device access requests.")
    var security = false

    @Option(name: .customLong("user"), help: "With --security: a user who may log in, NAME:PASSWORD[:ROLE] with ROLE readonly, readwrite or admin (default admin); repeatable.")
    var users: [String] = []

    @Flag(name: .customLong("allow-readonly"), help: "With --security: requests without a token may read.")
    var allowReadOnly = false

    @Option(help: "Keep the port, signing key and approved devices in this folder: a restart with the same --state has the same URL and tokens.")
    var state: String?

    func validate() throws {
        if !(rate >= 0.01 && rate <= 200) { throw ValidationError("--rate takes 0.01 to 200 updates per second") }
        if port < 0 || port > 65535 { throw ValidationError("--port takes 0 to 65535") }
        if mmsi.isEmpty || !mmsi.allSatisfy(\.isNumber) { throw ValidationError("--mmsi takes digits, got '\(mmsi)'") }
        if !security, !users.isEmpty || allowReadOnly {
            throw ValidationError("--user and --allow-readonly need --security")
        }
        for spec in users { _ = try SimUserSpec(spec) }
    }

    func run() async throws {
        let specs = try users.map(SimUserSpec.init)
        let kept = try state.map { try SimSignalKState(folder: $0) }
        var options = SignalKSimulator.Options(
            port: port != 0 ? port : kept?.port ?? 0, rate: rate, seed: seed, selfMMSI: mmsi,
            playback: playback.map { URL(fileURLWithPath: $0) }, security: security,
            users: Dictionary(specs.map { ($0.name, $0.password) }, uniquingKeysWith: { _, last in last }),
            userRoles: Dictionary(specs.map { ($0.name, $0.role) }, uniquingKeysWith: { _, last in last }),
            allowReadOnly: allowReadOnly)
        let admin = specs.first { $0.role == "admin" }?.name
        let urlBox = Locked("")
        options.onAccessRequest = { request in
            // What a device sent is printed without control characters (no terminal escapes).
            let notice = Self.printable(request)
            let wants = notice.permissions.map { ", asks for \($0)" } ?? ""
            say("access request from \(notice.ip): \"\(notice.description)\" (clientId \(notice.clientId)\(wants))")
            let url = urlBox.withLock { $0 }
            say("  approve: lookout sim signalk approve \(notice.clientId) --url \(url) --admin \(admin ?? "ADMIN"):PASSWORD"
                + (notice.permissions == nil ? " --permissions readonly" : ""))
            say("  deny:    lookout sim signalk deny \(notice.clientId) --url \(url) --admin \(admin ?? "ADMIN"):PASSWORD")
        }
        let portBox = Locked(0)
        if let kept {
            options.securityState = kept.security
            options.onSecurityStateChange = { security in
                do { try kept.save(port: portBox.withLock { $0 }, security: security) } catch { say("\(error)") }
            }
        }
        let simulator: SignalKSimulator
        let url: URL
        do {
            simulator = try SignalKSimulator(options: options)
            url = try await simulator.start()
        } catch {
            throw HostSetupError(description: "cannot start the Signal K simulator: \(error)")
        }
        urlBox.withLock { $0 = url.absoluteString }
        portBox.withLock { $0 = url.port ?? 0 }
        try kept?.save(port: url.port ?? 0, security: kept?.security ?? SignalKSecurityState())
        say("Signal K simulator at \(url.absoluteString)/signalk")
        say("REST:   \(simulator.httpEndpoint.absoluteString)")
        say("stream: \(simulator.streamEndpoint.absoluteString)")
        say("self:   \(simulator.selfContext)")
        say(playback.map { "playing \($0) at \(rate) Hz" } ?? "generated boat (seed \(seed)) at \(rate) Hz")
        if security {
            let who = specs.map { "\($0.name) (\($0.role))" }.joined(separator: ", ")
            say("security on: users \(who.isEmpty ? "none" : who)" + (allowReadOnly ? "; anonymous reads allowed" : ""))
            say("access requests: POST \(url.absoluteString)/signalk/v1/access/requests")
        }
        // Announced on loopback by mDNS, as signalk-server announces itself: `lookout discover --loopback`.
        let advertiser = SignalKMDNSAdvertiser(service: .init(
            instanceName: "Lookout simulator \(url.port ?? 0)", port: UInt16(url.port ?? 0),
            txt: SignalKMDNSAdvertiser.signalKTXT(selfURN: simulator.selfID, mmsi: mmsi)))
        do {
            try advertiser.start()
            say("announced by mDNS on 127.0.0.1")
        } catch {
            say("not announced by mDNS: \(error)")
        }
        say(Self.profile(url: url, security: security))
        await SimServing.untilInterrupted()
        advertiser.stop()
        await simulator.stop()
    }
}

extension SignalKSimCommand {
    /// The `[signalk.sim]` profile to paste into config.toml. With security on it asks this
    /// simulator for a device token itself (`access`), which the simulator prints with the
    /// command that approves it; no token is ever shown.
    static func profile(url: URL, security: Bool) -> String {
        var lines = ["", "config profile (paste into config.toml):", "[signalk.sim]", "url = \"\(url.absoluteString)\""]
        if security {
            lines.append("access = {description = \"Lookout\", wait = \"5m\"}   # the first run asks for a token; approve it with the command printed here")
            lines.append("# or ask before the first run: lookout signalk token request sim")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The notice with control characters (escape sequences, newlines) removed from what the
    /// device chose, and the description cut to 200 characters.
    static func printable(_ n: SignalKAccessRequestNotice) -> SignalKAccessRequestNotice {
        func clean(_ s: String) -> String {
            String(String.UnicodeScalarView(s.unicodeScalars.filter { $0.properties.generalCategory != .control }))
        }
        var out = n
        out.description = String(clean(n.description).prefix(200))
        out.clientId = clean(n.clientId)
        out.permissions = n.permissions.map(clean)
        return out
    }
}

/// A line on standard output, written at once (stdout may be a pipe).
private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
