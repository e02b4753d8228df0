import Foundation
import Logging
import LookoutConfig
import LookoutModules
import LookoutStore
import Lua

/// `schedule`: jobs that run on a wall-clock schedule in the configured time zone:
/// `every("5m", fn)`, `cron("*/5 * * * *", fn)`, `at("07:00", fn)`, `jobs()`.
struct ScheduleModule: LuaModule {
    let name = "schedule"
    /// Where `[serve] timezone` comes from; the zone is looked up only when a script requires
    /// the module (ICU's zone data costs start-up time every other run would pay).
    let config: HostConfig
    let paths: LookoutPaths
    let health: HealthRegistry?
    let persistent: Bool
    /// Longest wait between two looks at the wall clock (tests shorten it).
    var recheck: Double = ScheduleJob.defaultRecheck
    var stub: String { String(decoding: PackageResources.schedule_lua, as: UTF8.self) }

    /// - Parameters:
    ///   - persistent: remember last runs in the state database (false: memory only, for
    ///     `lookout test` and recorded runs).
    init(config: HostConfig, paths: LookoutPaths, health: HealthRegistry?, persistent: Bool) {
        self.config = config
        self.paths = paths
        self.health = health
        self.persistent = persistent
    }

    func push(into engine: LuaEngine, stack: LuaStack) throws {
        let store = persistent ? try? StateBackends.shared(paths: paths) : nil
        let timeZone = config.serveTimeZone
        let book = ScheduleBook(
            script: engine.options.name, timeZone: timeZone, records: ScheduleRecords(store: store),
            health: health, clock: engine.clock, recheck: recheck)
        try registerJobType(engine)
        engine.pushLibrary([
            "every": { call in try ScheduleModule.every(call, book: book) },
            "cron": { call in try ScheduleModule.cron(call, book: book) },
            "at": { call in try ScheduleModule.at(call, book: book) },
            "jobs": { call in
                call.stack.push(LuaValue.array(book.activeJobs.map { ScheduleModule.value(of: $0.health) }))
                return .values(1)
            },
        ], prefix: "schedule.", on: stack)
        stack.push(timeZone.identifier)
        stack.setField("timezone", in: -2)
    }

    static func every(_ call: LuaCall, book: ScheduleBook) throws -> LuaReturn {
        let spec: ScheduleSpec
        do {
            if call.stack.number(at: call.index(1)) != nil {
                let seconds = try call.duration(1, what: "interval")
                spec = try .interval(seconds: seconds, text: Quantities.formatDuration(seconds))
            } else {
                let text = try call.string(1)
                spec = try .interval(text)
                _ = try call.duration(1, what: "interval")  // within LuaRange.duration
            }
        } catch let error as ScheduleSpecError {
            throw call.argumentError(1, error.description)
        }
        return try make(call, spec: spec, book: book)
    }

    static func cron(_ call: LuaCall, book: ScheduleBook) throws -> LuaReturn {
        let text = try call.string(1)
        let spec: ScheduleSpec
        do { spec = .cron(try CronExpression(text)) } catch { throw call.argumentError(1, error.description) }
        return try make(call, spec: spec, book: book)
    }

    static func at(_ call: LuaCall, book: ScheduleBook) throws -> LuaReturn {
        let text = try call.string(1)
        let spec: ScheduleSpec
        do { spec = try .at(text) } catch { throw call.argumentError(1, error.description) }
        return try make(call, spec: spec, book: book)
    }

    /// Makes a job from `(spec, fn [, opts])`.
    static func make(_ call: LuaCall, spec: ScheduleSpec, book: ScheduleBook) throws -> LuaReturn {
        let callback = try call.function(2)
        let options: [String: LuaValue]
        do {
            options = try call.options(3)
        } catch {
            call.engine.release(callback)
            throw error
        }
        var missed = MissedRunPolicy.once
        var name = "\(spec.kind) \(spec)"
        for (key, value) in options {
            switch key {
            case "name":
                guard let text = value.text, !text.isEmpty else {
                    call.engine.release(callback)
                    throw call.argumentError(3, "opts.name must be a non-empty string")
                }
                name = text
            case "missed":
                guard let text = value.text, let policy = MissedRunPolicy(rawValue: text) else {
                    call.engine.release(callback)
                    let got = value.text.map { String(reflecting: $0) } ?? "a \(value.typeName)"
                    throw call.argumentError(3, "opts.missed must be \"once\" or \"skip\", got \(got)")
                }
                missed = policy
            default:
                call.engine.release(callback)
                throw call.argumentError(3, "unknown option '\(key)' (known: name, missed)")
            }
        }
        let job = ScheduleJob(
            name: book.uniqueName(name), spec: spec, missed: missed,
            createdAt: call.engine.callSite(of: call.L), callback: callback, book: book)
        book.add(job, engine: call.engine)
        call.push(object: job, type: ScheduleJob.type)
        return .values(1)
    }

    /// A job as a Lua table: `{name, kind, spec, next, last_run, last_ok, last_error, runs, skipped}`.
    static func value(of job: HealthRegistry.Job) -> LuaValue {
        var fields: [String: LuaValue] = [
            "name": .text(job.name), "kind": .text(job.kind), "spec": .text(job.spec),
            "runs": .int(Int64(job.runs)), "skipped": .int(Int64(job.skipped)),
        ]
        if let next = job.next { fields["next"] = .int(epochMilliseconds(next)) }
        if let last = job.lastRun { fields["last_run"] = .int(epochMilliseconds(last)) }
        if let ok = job.lastOK { fields["last_ok"] = .bool(ok) }
        if let error = job.lastError { fields["last_error"] = .text(error) }
        return .object(fields)
    }

    static func epochMilliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The job userdata: methods `next`, `stop`, `running`, `busy`; fields `name`, `kind`, `spec`.
    private func registerJobType(_ engine: LuaEngine) throws {
        let type = ScheduleJob.type
        engine.register(type: type, methods: [
            "next": { call in
                let job = try call.object(as: ScheduleJob.self, type: type)
                return call.returning(job.next.map { .int(ScheduleModule.epochMilliseconds($0)) } ?? .nil)
            },
            "stop": { call in
                let job = try call.object(as: ScheduleJob.self, type: type)
                return call.returning(.bool(job.stop(engine: call.engine)))
            },
            "running": { call in
                let job = try call.object(as: ScheduleJob.self, type: type)
                return call.returning(.bool(job.isActive))
            },
            "busy": { call in
                let job = try call.object(as: ScheduleJob.self, type: type)
                return call.returning(.bool(job.isBusy))
            },
        ])
        // Fields besides methods: replace __index by a function that answers `name`, `kind`, `spec`.
        let L = engine.L
        let s = LuaStack(L)
        s.rawField(type.name, of: LuaStack.registry)
        let metatable = s.top
        s.rawField("__index", of: metatable)
        let methods = engine.ref(at: -1, in: L)
        s.pop(1)
        engine.pushFunction("schedule.job.__index") { call in
            guard let job = call.openObject(at: 1, as: ScheduleJob.self, type: type) else { return call.returning(.nil) }
            let key = call.stack.string(at: 2) ?? ""
            switch key {
            case "name": return call.returning(.text(job.name))
            case "kind": return call.returning(.text(job.spec.kind))
            case "spec": return call.returning(.text(job.spec.description))
            default:
                call.engine.push(methods, on: call.stack)
                call.stack.pushCopy(of: 2)
                call.stack.rawGet(in: -2)
                return .values(1)
            }
        }
        s.setField("__index", in: metatable)
        s.pop(1)
    }
}
