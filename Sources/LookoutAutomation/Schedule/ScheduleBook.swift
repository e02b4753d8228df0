import Foundation
import LookoutModules
import Lua

/// The jobs of one Lua state: names, persistence and health reporting.
final class ScheduleBook {
    let script: String
    let timeZone: TimeZone
    private let records: ScheduleRecords
    private let health: HealthRegistry?
    private let clock: LuaClock
    /// Longest wait between two looks at the wall clock.
    let recheck: Double
    private(set) var jobs: [ScheduleJob] = []
    private var lastSuccess: Date?

    init(script: String, timeZone: TimeZone, records: ScheduleRecords, health: HealthRegistry?, clock: LuaClock, recheck: Double) {
        self.recheck = recheck
        self.script = script
        self.timeZone = timeZone
        self.records = records
        self.health = health
        self.clock = clock
    }

    /// Jobs that have not been stopped.
    var activeJobs: [ScheduleJob] { jobs.filter(\.isActive) }

    /// A name not used by an active job: `wanted`, else `wanted #2`, `#3`…
    func uniqueName(_ wanted: String) -> String {
        let taken = Set(activeJobs.map(\.name))
        guard taken.contains(wanted) else { return wanted }
        var n = 2
        while taken.contains("\(wanted) #\(n)") { n += 1 }
        return "\(wanted) #\(n)"
    }

    /// Adds a job and starts loading its record; it begins once the record is known.
    func add(_ job: ScheduleJob, engine: LuaEngine) {
        jobs.removeAll { !$0.isActive }
        jobs.append(job)
        engine.anchor(job)
        job.holdWhileLoading(engine: engine)
        let key = recordKey(job)
        let records = self.records
        let runtime = engine.runtime
        let generation = engine.generation
        let handle = UncheckedJob(job: job)
        let release = engine.holdTime()  // virtual time waits for the record
        Task {
            let record = await records.load(key: key)
            await runtime.withLiveEngine(generation: generation) { engine in
                handle.job.begin(record: record, engine: engine)
                engine.drain()  // a run that is due now starts now
            }
            release()
        }
        report()
    }

    func save(_ job: ScheduleJob) { records.save(job.record, key: recordKey(job)) }

    func succeeded(_ job: ScheduleJob) { lastSuccess = clock.now() }

    private func recordKey(_ job: ScheduleJob) -> String { script + "/" + job.name }

    /// Tells health the jobs' state.
    func report() {
        guard let health else { return }
        let jobs = activeJobs.map(\.health)
        let next = jobs.compactMap(\.next).min()
        let lastSuccess = self.lastSuccess
        health.updateScript(script) { entry in
            entry.jobs = jobs
            entry.nextRun = next
            if let lastSuccess { entry.lastSuccess = lastSuccess }
        }
    }
}

/// Carries a job into the closure that runs on its runtime's executor.
private struct UncheckedJob: @unchecked Sendable {
    // @unchecked Sendable: the job is only touched inside `LuaRuntime.withLiveEngine`, which runs on
    // the runtime's executor, the same thread that made the job.
    let job: ScheduleJob
}
