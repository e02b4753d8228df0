import Foundation
import LookoutModules
import Lua

/// What a job does about a run whose time passed while the host was not running or the machine
/// slept.
enum MissedRunPolicy: String, Sendable {
    /// Run once at wake (never a burst, however many runs were missed). The default.
    case once
    /// Do not run; wait for the next time.
    case skip
}

/// A job made by `schedule.every`, `schedule.cron` or `schedule.at`.
///
/// The job keeps one host timer armed at its next run, at most `recheck` seconds ahead, so that
/// a sleep of the machine or a change of the wall clock is noticed within a minute. Each run is a
/// task of its own (errors are reported with their traceback like any task's); a run that is
/// due while the previous one still runs is skipped, never overlapped.
final class ScheduleJob: LuaObject {
    static let type = LuaObjectType(name: "lookout.schedule.job", displayName: "schedule job")
    /// Longest time between two looks at the wall clock (by default).
    static let defaultRecheck: Double = 60
    /// A run this late or more counts as missed (`missed = "skip"` skips it).
    static let grace: Double = 60

    let name: String
    let spec: ScheduleSpec
    let missed: MissedRunPolicy
    let createdAt: String
    private let book: ScheduleBook
    private var callback: LuaRef?
    private(set) var next: Date?
    private(set) var record = ScheduleRecord()
    private(set) var isActive = true
    private var runningTask: LuaTask?
    private var timerID: UInt64?
    private(set) var runs = 0
    private(set) var skipped = 0

    init(name: String, spec: ScheduleSpec, missed: MissedRunPolicy, createdAt: String, callback: LuaRef, book: ScheduleBook) {
        self.name = name
        self.spec = spec
        self.missed = missed
        self.createdAt = createdAt
        self.callback = callback
        self.book = book
    }

    var luaDescription: String {
        "schedule job '\(name)' (\(spec.kind) \(spec))" + (isActive ? "" : " (stopped)")
    }

    /// Whether a run is in progress.
    var isBusy: Bool { runningTask.map { !$0.isFinished } ?? false }

    func luaClose(engine: LuaEngine) { stop(engine: engine) }

    /// Starts the job once its record is known (`record` nil: it never ran).
    func begin(record: ScheduleRecord?, engine: LuaEngine) {
        guard isActive else { return }
        if let record { self.record = record }
        let now = engine.clock.now()
        let lastRun = self.record.lastRun.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        switch spec {
        case .every(let seconds, _):
            next = lastRun.map { $0.addingTimeInterval(seconds) } ?? now
        case .cron(let expression), .at(let expression, _):
            // A remembered run: the slot after it may have passed while we were away (missed).
            next = expression.next(after: min(lastRun ?? now, now), in: book.timeZone)
        }
        book.report()
        wake(engine: engine)
    }

    /// Keeps the engine busy while the record loads (a script with only schedules must not end).
    func holdWhileLoading(engine: LuaEngine) {
        arm(after: book.recheck, engine: engine)
    }

    private func arm(after seconds: Double, engine: LuaEngine) {
        // The new timer first: cancelling the old one alone could leave the engine idle for a
        // moment, and a script whose only work is this job would end there.
        let old = timerID
        timerID = engine.after(seconds: seconds) { [weak self] engine in
            self?.timerID = nil
            self?.wake(engine: engine)
        }
        if let old { engine.cancel(hostTimer: old) }
    }

    /// The timer fired (or the job just began): run if due, then arm for the next time.
    private func wake(engine: LuaEngine) {
        guard isActive else { return }
        guard let due = next else {
            // The last-run record is still loading: keep the engine busy until it has.
            return holdWhileLoading(engine: engine)
        }
        let now = engine.clock.now()
        if now >= due {
            let late = now.timeIntervalSince(due)
            if isBusy || (missed == .skip && late >= ScheduleJob.grace) {
                skipped += 1
            } else {
                startRun(at: now, engine: engine)
            }
            next = following(due: due, now: now)
            book.report()
        }
        guard let next else { return }
        arm(after: min(max(0, next.timeIntervalSince(now)), book.recheck), engine: engine)
    }

    /// The next run after one that was due at `due` and handled at `now`: missed slots collapse
    /// into the one just handled.
    private func following(due: Date, now: Date) -> Date? {
        switch spec {
        case .every(let seconds, _):
            let next = due.addingTimeInterval(seconds)
            return next > now ? next : now.addingTimeInterval(seconds)
        case .cron(let expression), .at(let expression, _):
            return expression.next(after: now, in: book.timeZone)
        }
    }

    private func startRun(at now: Date, engine: LuaEngine) {
        guard let callback else { return }
        runs += 1
        record = ScheduleRecord(lastRun: Int64((now.timeIntervalSince1970 * 1000).rounded()), lastOK: nil, lastError: nil)
        book.save(self)
        let task = engine.spawn(label: "schedule job '\(name)' (\(spec.kind) \(spec)) created at \(createdAt)") { stack in
            engine.push(callback, on: stack)
            engine.push(object: self, type: ScheduleJob.type, on: stack)
            return 1
        }
        runningTask = task
        engine.whenEnded(task) { [weak self] task in self?.ended(task) }
    }

    private func ended(_ task: LuaTask) {
        if runningTask === task { runningTask = nil }
        switch task.status {
        case .done:
            record.lastOK = true
            record.lastError = nil
            book.succeeded(self)
        case .cancelled:
            record.lastOK = false
            record.lastError = "cancelled"
        default:
            record.lastOK = false
            let text = task.errorText ?? "failed"
            record.lastError = String(text.split(separator: "\n", maxSplits: 1).first ?? Substring(text))
        }
        book.save(self)
        book.report()
    }

    /// Stops the job: no further runs; a run in progress finishes.
    @discardableResult
    func stop(engine: LuaEngine) -> Bool {
        guard isActive else { return false }
        isActive = false
        next = nil
        if let id = timerID { engine.cancel(hostTimer: id) }
        timerID = nil
        if let callback { engine.release(callback) }
        callback = nil
        engine.unanchor(self)
        book.report()
        return true
    }

    /// The job as `schedule.jobs()` and health show it.
    var health: HealthRegistry.Job {
        HealthRegistry.Job(
            name: name, kind: spec.kind, spec: spec.description, next: next,
            lastRun: record.lastRun.map { Date(timeIntervalSince1970: Double($0) / 1000) },
            lastOK: record.lastOK, lastError: record.lastError, runs: runs, skipped: skipped)
    }
}
