import Foundation
import LookoutConfig
import LookoutStore
import Lua
import NightscoutKit
import NorthlightKit
import LookoutWire

/// `feedback`: Northlight feedback for scripts: submit feedback and bug reports, vote, read the
/// public board and roadmap.
///
/// `feedback.client "app"` reads `[northlight.app]`; `feedback.client()` the default profile.
/// Methods wait without blocking other tasks and return `nil, err` on failure
/// (`err.service == "northlight"`); submissions that fail for a passing reason go to the outbox.
/// See `Stubs/feedback.lua`.
public struct FeedbackModule: LuaModule {
    public let name = "feedback"
    public var stub: String { String(decoding: PackageResources.feedback_lua, as: UTF8.self) }

    /// Where profiles are.
    let config: HostConfig
    /// Where `api_key_env` is read.
    let environment: [String: String]
    /// The app version in device info.
    let appVersion: String
    /// Opens the state database (the outbox), on first use and off the Lua thread.
    let openStore: @Sendable () throws -> any StateBackend
    /// When queued submissions are tried again.
    let retryPolicy: RetryPolicy

    /// The module for scripts, with the outbox in the state database at `paths`.
    public init(config: HostConfig, paths: LookoutPaths, appVersion: String = LookoutVersion.current,
         environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(config: config, environment: environment, appVersion: appVersion, retryPolicy: RetryPolicy()) {
            try StateBackends.shared(paths: paths)
        }
    }

    /// The module over an open store (tests).
    public init(config: HostConfig, store: any StateBackend, environment: [String: String], retryPolicy: RetryPolicy = RetryPolicy()) {
        self.init(config: config, environment: environment, appVersion: LookoutVersion.current, retryPolicy: retryPolicy) { store }
    }

    private init(config: HostConfig, environment: [String: String], appVersion: String, retryPolicy: RetryPolicy,
                 openStore: @escaping @Sendable () throws -> any StateBackend) {
        self.config = config
        self.environment = environment
        self.appVersion = appVersion
        self.retryPolicy = retryPolicy
        self.openStore = openStore
    }

    public func push(into engine: LuaEngine, stack: LuaStack) throws {
        engine.register(type: FeedbackClient.type, methods: FeedbackClient.methods)
        let config = self.config, environment = self.environment, appVersion = self.appVersion
        let openStore = self.openStore, policy = self.retryPolicy
        engine.pushLibrary([
            "client": { call in
                let name = try call.optionalString(1)
                do {
                    let connection = try NorthlightConnection.profile(name, config: config, appVersion: appVersion, environment: environment)
                    Self.sendQueued(connection: connection, openStore: openStore, engine: call.engine)
                    call.push(object: FeedbackClient(connection: connection, openStore: openStore, policy: policy,
                                                     quota: config.limits.outboxQuota), type: FeedbackClient.type)
                    return .values(1)
                } catch {
                    return call.failure(LuaErrorInfo.northlight(error))
                }
            },
            "severities": { call in call.returning(LuaValue.array(NorthlightSeverity.allCases.map { LuaValue.text($0.rawValue) })) },
        ], prefix: "feedback.", on: stack)
    }
}

extension FeedbackModule {
    /// How long a script that ends at once still waits for the submissions an earlier run queued.
    static let queuedBound = 10.0

    /// Sends what earlier runs left queued for `connection`'s profile; the script's run waits for
    /// it (at most ``queuedBound`` seconds), so a script that opens the profile and ends at once
    /// still sends them, and what is left is said on standard error (with the way to send it).
    static func sendQueued(connection: NorthlightConnection, openStore: @escaping @Sendable () throws -> any StateBackend,
                           engine: LuaEngine) {
        let report = Locked<Outbox.DrainReport?>(nil)
        let release = engine.holdTime()  // virtual time waits for the sending too
        Task.detached {
            var drained = Outbox.DrainReport()
            if let store = try? openStore(), let done = try? await NorthlightSubmissions.flush(connection: connection, store: store,
                                                                                                            ignoringBackoff: true) {
                drained = done
            }
            report.withLock { $0 = drained }
            release()
        }
        // A host timer keeps the run open until the sending is done; it looks every 50 ms.
        let step = 0.05
        var left = Int(queuedBound / step)
        let profile = "northlight.\(connection.profile)"
        func look(_ engine: LuaEngine) {
            if let done = report.withLock({ $0 }) {
                if done.retrying > 0 {
                    engine.options.warnings("feedback: \(done.retrying) queued submission(s) of \(profile) not sent yet (the server "
                                            + "cannot be reached or is busy); the next run that opens the profile, or `lookout outbox retry`, sends them")
                }
                return
            }
            left -= 1
            guard left > 0 else {
                engine.options.warnings("feedback: queued submissions of \(profile) are still being sent after \(Int(queuedBound)) s; "
                                        + "what is not sent when the script ends is sent by the next run that opens the profile")
                return
            }
            _ = engine.after(seconds: step, look)
        }
        _ = engine.after(seconds: step, look)
    }
}
