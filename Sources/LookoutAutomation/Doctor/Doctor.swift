import Foundation
import LookoutWire
import GarminKit
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua
import NightscoutKit
import NorthlightKit
import SignalKKit

/// The checks behind `lookout doctor`: configuration, state database, outbox, and for each
/// Nightscout and Signal K profile its secrets, reachability, authentication and data age.
///
/// Every finding is in plain words and free of secrets; a failing part never stops the others.
public struct Doctor: Sendable {
    /// Where Lookout's configuration and state live.
    public let paths: LookoutPaths
    /// The configuration, or why it could not be read.
    public let config: Result<HostConfig, ConfigError>
    /// The environment secrets are looked up in (the process environment by default).
    public let environment: [String: String]
    /// Per-request timeout for the network checks.
    public var timeout: TimeInterval = 10
    /// CGM data older than this is reported as a warning.
    public var staleAfter: TimeInterval = 15 * 60

    /// A doctor for these paths and this configuration.
    public init(paths: LookoutPaths, config: Result<HostConfig, ConfigError>,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.paths = paths
        self.config = config
        self.environment = environment
    }

    /// Runs every check; `progress` sees each finding as it is made.
    public func run(progress: @Sendable (DoctorCheck) -> Void = { _ in }) async -> [DoctorCheck] {
        var checks: [DoctorCheck] = []
        func add(_ c: DoctorCheck) {
            checks.append(c)
            progress(c)
        }
        switch config {
        case .failure(let error):
            add(DoctorCheck("config", .failure, error.description))
        case .success(let config):
            let exists = FileManager.default.fileExists(atPath: paths.configFile)
            let profiles = HostConfig.knownServices.flatMap { s in config.profiles(service: s).map { "\(s).\($0)" } }
            add(DoctorCheck("config", .ok, (exists ? paths.configFile : "no config file (\(paths.configFile)); built-in defaults")
                + (profiles.isEmpty ? ", no profiles" : ", profiles: " + profiles.joined(separator: ", "))))
        }
        if case .success(let config) = config {
            for warning in config.secretFileWarnings(environment: environment) { add(DoctorCheck("secrets", .warning, warning)) }
            for group in NightscoutSharedSites.groups(config) {
                add(DoctorCheck("sites", .ok, group.profiles.map { "nightscout.\($0)" }.joined(separator: ", ")
                    + " name one site (\(group.site)): they share one remote-command budget, under the strictest limits of those that set any"))
            }
        }
        for c in await stateChecks() { add(c) }
        guard case .success(let config) = config else { return checks }
        var refusedSites: Set<String> = []
        for name in config.profiles(service: "nightscout") { add(await nightscout(name, config: config, refusedSites: &refusedSites)) }
        for name in config.profiles(service: "signalk") { add(await signalk(name, config: config)) }
        for name in config.profiles(service: "garmin") { add(await garmin(name, config: config)) }
        for name in config.profiles(service: "northlight") { add(await northlight(name, config: config)) }
        return checks
    }

    // MARK: state

    func stateChecks() async -> [DoctorCheck] {
        let store: any StateBackend
        do { store = try StateBackends.shared(paths: paths) } catch {
            return [DoctorCheck("state", .failure, "cannot open \(paths.databaseFile): \(error.description)")]
        }
        var checks = await databaseChecks(store)
        guard checks.first?.status != .failure else { return checks }
        checks.append(roomCheck(store))
        do {
            let open = try await store.items(site: nil, states: [.pending, .failed], limit: 100_000)
            let failed = open.filter { $0.state == .failed }
            let pending = open.filter { $0.state == .pending }
            if open.isEmpty {
                checks.append(DoctorCheck("outbox", .ok, "empty"))
            } else {
                var words = "\(pending.count) pending, \(failed.count) failed"
                if let oldest = pending.map(\.created).min() {
                    words += "; oldest pending queued \(Self.age(Date().timeIntervalSince(oldest))) ago"
                }
                if let last = failed.last?.lastError { words += "; last failure: \(last)" }
                let stuck = pending.contains { Date().timeIntervalSince($0.created) > 3600 }
                checks.append(DoctorCheck("outbox", failed.isEmpty && !stuck ? .ok : .warning,
                                          words + (failed.isEmpty ? "" : " (see `lookout outbox`)")))
            }
        } catch {
            checks.append(DoctorCheck("outbox", .failure, "cannot read the outbox: \(error)"))
        }
        return checks
    }

    /// The state database: reachable and its schema, its audit log append-only in the database,
    /// and (PostgreSQL) the clocks cluster leases depend on: this machine's and every live
    /// instance's against the database's.
    func databaseChecks(_ store: any StateBackend) async -> [DoctorCheck] {
        let expected = StateStore.migrations.map(\.name)
        let applied: [String]
        let health: StateHealth
        do {
            applied = try await store.appliedMigrations()
            health = try await store.health()
        } catch {
            return [DoctorCheck("state", .failure, "\(store.location): \(error.description)")]
        }
        var checks: [DoctorCheck] = []
        let unknown = applied.filter { !expected.contains($0) }, missing = expected.filter { !applied.contains($0) }
        if !unknown.isEmpty {
            checks.append(DoctorCheck("state", .warning, "\(store.location): the schema is newer than this lookout "
                                      + "(\(unknown.joined(separator: ", "))): upgrade lookout here before it serves"))
        } else if !missing.isEmpty {
            checks.append(DoctorCheck("state", .failure, "\(store.location): the schema lacks \(missing.joined(separator: ", ")) "
                                      + "(run `lookout state migrate` as a role that may create tables)"))
        } else {
            checks.append(DoctorCheck("state", .ok, "\(store.location) (schema \(applied.last ?? "-"), \(applied.count) migrations)"))
        }
        checks.append(health.missingAuditProtections.isEmpty
            ? DoctorCheck("audit", .ok, "append-only in the database (triggers refuse changes and deletions)")
            : DoctorCheck("audit", .failure, "the audit log can be changed: missing \(health.missingAuditProtections.joined(separator: ", "))"))
        guard !(store is StateStore) else { return checks }
        let skew = Date().timeIntervalSince(health.now)
        checks.append(DoctorCheck("clock", abs(skew) > Self.clockTolerance ? .warning : .ok,
            String(format: "this machine's clock is %.2f s %@ the database's", abs(skew), skew >= 0 ? "ahead of" : "behind")
                + (abs(skew) > Self.clockTolerance ? " (cluster leases and claims need it within \(Int(Self.clockTolerance)) s: run NTP)" : "")))
        for name in health.clusters {
            guard let view = try? await store.clusterView(cluster: name) else { continue }
            let live = view.live
            guard !live.isEmpty else { continue }
            let off = live.filter { abs($0.clockSkew) > Self.clockTolerance }
            let waiting = view.leases.count - view.held.count
            var words = "\(live.count) live instance\(live.count == 1 ? "" : "s") (\(live.map(\.id).joined(separator: ", "))), "
                + "\(view.held.count) of \(view.leases.count) pieces of work running"
            if !off.isEmpty {
                words += "; clocks off the database's: " + off.map { String(format: "%@ %+.1f s", $0.id, $0.clockSkew) }.joined(separator: ", ")
            }
            checks.append(DoctorCheck("cluster \(name)", off.isEmpty && waiting == 0 ? .ok : .warning, words))
        }
        return checks
    }

    /// How far apart clocks may be before doctor warns (leases last 15 s by default).
    static let clockTolerance: TimeInterval = 2

    /// The database's size and the disk's free space, against `[state]`: a warning once
    /// scripts' writes are refused (the guard and the audit log keep working).
    func roomCheck(_ backend: any StateBackend) -> DoctorCheck {
        let room = (try? config.get())?.stateRoom ?? .defaults
        guard let store = backend as? StateStore else {
            do { try backend.requireRoom() } catch { return DoctorCheck("state size", .warning, error.description) }
            return DoctorCheck("state size", .ok, "PostgreSQL: state.max_size checked against the database's size")
        }
        let usage = store.usage()
        var words = "database \(Quantities.formatSize(usage.size))"
        if let max = room.maxSizeBytes { words += " of \(Quantities.formatSize(max)) (state.max_size)" }
        words += usage.free.map { "; \(Quantities.formatSize($0)) free on its disk" } ?? "; free space unknown"
        words += " (scripts' writes stop below \(Quantities.formatSize(room.minFreeBytes)))"
        if let refusal = room.refusal(for: usage) { return DoctorCheck("state size", .warning, refusal.message) }
        return DoctorCheck("state size", .ok, words)
    }

    // MARK: services

    /// One Nightscout profile: reachable, credentials accepted, newest entry. `refusedSites` holds
    /// the sites whose credentials were refused earlier in this run: Nightscout then delays every
    /// request with credentials from this address (5 s more per failure), which a later check of
    /// the same site sees as a timeout.
    func nightscout(_ name: String, config: HostConfig, refusedSites: inout Set<String>) async -> DoctorCheck {
        let subject = "nightscout.\(name)"
        let connection: NightscoutConnection
        do { connection = try NightscoutConnection.profile(name, config: config, environment: environment) } catch {
            return DoctorCheck(subject, .failure, Self.plain(error))
        }
        let client = NightscoutClient(configuration: connection.configuration, timeout: timeout)
        var anonymous = connection.configuration
        anonymous.credentials = .none
        let reader = NightscoutClient(configuration: anonymous, timeout: timeout)
        let site = Redaction.display(connection.configuration.siteURL)
        let siteKey = Redaction.url(connection.configuration.siteURL)
        let credentialed = connection.configuration.credentials != .none
        let which = connection.credentialSource ?? "the credentials"
        var checkingCredentials = false
        do {
            // The status without credentials where the site allows it, so that only the one
            // credentials check below can count as a failed login.
            let status: V1ServerStatus
            do { status = try await reader.status() } catch let error as NightscoutError {
                guard case .unauthorized = error, credentialed else { throw error }
                checkingCredentials = true
                status = try await client.status()
            }
            var words = "\(site): Nightscout \(status.version ?? "(version unknown)")"
            if credentialed {
                // One check only: after a refusal more requests with credentials would only wait.
                checkingCredentials = true
                let auth = try await client.verifyAuth()
                checkingCredentials = false
                guard auth.isAuthenticated else {
                    refusedSites.insert(siteKey)
                    if auth.canRead {
                        return DoctorCheck(subject, .failure, "\(words): reads work, writes will be refused: \(which) is wrong")
                    }
                    // Nightscout gives a credential that does not resolve no permissions at all,
                    // not the default roles: reads with it are refused too, even on a site that
                    // is readable without credentials.
                    return DoctorCheck(subject, .failure, "\(words): the site refused \(which): it is wrong; reads with it are refused too")
                }
                words += auth.isAdmin ? ", admin" : auth.canWrite ? ", read and write" : ", read only"
            }
            let latest = try await client.entries(V1Query(collection: .entries, from: Date(timeIntervalSinceNow: -7 * 86400), count: 1))
            guard let entry = latest.first, let date = entry.common.date?.date else {
                return DoctorCheck(subject, .warning, words + "; no CGM entries in the last 7 days")
            }
            let age = Date().timeIntervalSince(date)
            words += "; newest entry \(Self.age(age)) old" + (entry.sgv.map { " (\(Int($0)) mg/dL)" } ?? "")
            return DoctorCheck(subject, age > staleAfter ? .warning : .ok, words)
        } catch let error as NightscoutError {
            if case .unauthorized = error {
                refusedSites.insert(siteKey)
                let what = connection.credentialSource.map { "\($0) is wrong" }
                    ?? "the site needs credentials: add token_env (or token_file) to the profile"
                return DoctorCheck(subject, .failure, "\(site): the site refused the request (\(error)): \(what)")
            }
            if case .transport(let message) = error, checkingCredentials, message.contains("timed out") {
                let earlier = refusedSites.contains(siteKey) ? "credentials were refused earlier in this run, and " : ""
                return DoctorCheck(subject, .failure, "\(site): no answer to the credentials check within \(Int(timeout)) s: \(earlier)"
                    + "Nightscout delays requests for a while after refused credentials, so \(which) may be wrong too; "
                    + "fix the refused one and run doctor again in a minute")
            }
            return DoctorCheck(subject, .failure, "\(site): \(error)")
        } catch {
            return DoctorCheck(subject, .failure, "\(site): \(error)")
        }
    }

    func signalk(_ name: String, config: HostConfig) async -> DoctorCheck {
        let subject = "signalk.\(name)"
        let connection: SignalKConnection
        do {
            connection = try SignalKConnection.profile(name, config: config, environment: environment,
                                                       tokens: URL(fileURLWithPath: paths.tokensDirectory, isDirectory: true))
        } catch {
            return DoctorCheck(subject, .failure, Self.plain(error))
        }
        let server = Redaction.display(connection.server)
        do {
            let endpoints = try await SignalKREST.discover(server: connection.server)
            var words = "\(server): \(endpoints.serverId ?? "Signal K server") \(endpoints.serverVersion ?? "")"
                .trimmingCharacters(in: .whitespaces)
            // The token a script of the profile would send: the one stored by an access request, else the configured one.
            let token = await connection.access?.token() ?? connection.token
            let provider: (@Sendable () async -> String?)? = token.map { t in { @Sendable in t } }
            let rest = SignalKREST(server: connection.server, tokenProvider: provider)
            let selfValue = try await rest.get("self")
            words += "; self \(selfValue.stringValue ?? "?")" + (token == nil ? "" : "; token accepted")
            if let t = token, let exp = SignalKTokenStore.jwtExpiry(t) {
                let left = exp.timeIntervalSinceNow
                if left < 7 * 86400 { return DoctorCheck(subject, .warning, words + "; the token expires in \(Self.age(max(0, left)))") }
            }
            return DoctorCheck(subject, .ok, words)
        } catch let e as SignalKClientError {
            if case .unauthorized = e {
                let stored = await connection.access?.token()
                let why = (stored ?? connection.token) == nil
                    ? "the server needs a token (security is on): run `lookout signalk token request \(name)`, or add token_env or token_file"
                    : "the server refused the token: run `lookout signalk token request \(name)` for a new one"
                return DoctorCheck(subject, .failure, "\(server): \(why)")
            }
            return DoctorCheck(subject, .failure, "\(server): \(e)")
        } catch {
            return DoctorCheck(subject, .failure, "\(server): \(error)")
        }
    }

    func garmin(_ name: String, config: HostConfig) async -> DoctorCheck {
        let subject = "garmin.\(name)"
        let client: GarminClient
        do {
            let connection = try GarminConnection.profile(name, config: config, paths: paths, environment: environment)
            client = try GarminClient(configuration: connection.configuration)
        } catch {
            return DoctorCheck(subject, .failure, Self.plain(error))
        }
        let status = await client.status()
        guard status.loggedIn else {
            return DoctorCheck(subject, .failure, "not logged in: run `lookout garmin login \(name)`")
        }
        do {
            _ = try await client.json(.profile)
            let expiry = await client.status().oauth2ExpiresAt.map { "; access token valid for \(Self.age(max(0, $0.timeIntervalSinceNow)))" } ?? ""
            return DoctorCheck(subject, .ok, "logged in (\(status.domain ?? "garmin.com"))\(expiry)")
        } catch {
            return DoctorCheck(subject, .failure, "the Connect API refused or failed: \(error)")
        }
    }

    /// One Northlight profile: the API answers at its URL and accepts the key (one read of the
    /// public board, which every key may read).
    func northlight(_ name: String, config: HostConfig) async -> DoctorCheck {
        let subject = "northlight.\(name)"
        let connection: NorthlightConnection
        do {
            connection = try NorthlightConnection.profile(name, config: config, appVersion: LookoutVersion.current, environment: environment)
        } catch {
            return DoctorCheck(subject, .failure, Self.plain(error))
        }
        let site = Redaction.display(connection.configuration.baseURL)
        var settings = connection.configuration
        settings.timeout = min(settings.timeout, timeout)
        do {
            let board = try await NorthlightClient(configuration: settings).publicFeedback(refresh: true)
            return DoctorCheck(subject, .ok, "\(site): key accepted; \(board.count) item\(board.count == 1 ? "" : "s") on the public board")
        } catch let error as NorthlightError {
            var which = "the API key"
            if let key = try? config.secret(service: "northlight", profile: name, name: "api_key", environment: environment) {
                switch key.source {
                case .environment(let variable): which = "the API key in \(variable)"
                case .file(let path): which = "the API key in file \(path)"
                }
            }
            switch error {
            case .invalidAPIKey:
                return DoctorCheck(subject, .failure, "\(site): the server refused the key: \(which) is wrong")
            case .serverError(statusCode: 404):
                return DoctorCheck(subject, .failure, "\(site): no Northlight API there (404): the url should end in /api/v1")
            default:
                return DoctorCheck(subject, .failure, "\(site): \(error)")
            }
        } catch {
            return DoctorCheck(subject, .failure, "\(site): \(error)")
        }
    }

    // MARK: wording

    static func plain(_ error: any Error) -> String {
        if let info = error as? LuaErrorInfo { return info.message }
        return String(describing: error)
    }

    /// `42 s`, `5 min`, `3 h 10 min`, `2 days`.
    static func age(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded())
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 86400 { return "\(s / 3600) h" + (s % 3600 >= 60 ? " \(s % 3600 / 60) min" : "") }
        return "\(s / 86400) day" + (s / 86400 == 1 ? "" : "s")
    }
}
