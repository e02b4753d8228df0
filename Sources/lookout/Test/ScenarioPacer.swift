import Foundation
import LookoutScenarios
import Lua

/// Keeps virtual time moving for a script that only reacts to data (`boat:on`, a `deltas` loop, a
/// task waiting for the stream) and has no timer of its own: virtual time jumps only to timer
/// deadlines, so without one such a script would wait forever for data that is fed only when
/// time moves. The pacer is a host timer at the scenario's next data time (a reading, a Loop
/// report or a boat sample), then just past the end, where the runner stops the run. It re-arms
/// only while the script has something else alive (a task or timer), so a script that has
/// finished still ends the run at once.
enum ScenarioPacer {
    /// Arms the first pacing timer on `engine` (call on the executor).
    static func arm(_ engine: LuaEngine, scenario: Scenario) {
        var times = scenario.readings.map(\.time) + scenario.loopReports + (scenario.boat?.samples.map(\.time) ?? [])
        times = Array(Set(times.filter { $0 > scenario.start && $0 <= scenario.end })).sorted()
        times.append(scenario.end.addingTimeInterval(1))
        schedule(engine, times: times[...])
    }

    private static func schedule(_ engine: LuaEngine, times: ArraySlice<Date>) {
        let now = engine.clock.now()
        let rest = times.drop { $0 <= now }
        guard let next = rest.first else { return }
        engine.after(seconds: next.timeIntervalSince(now)) { engine in
            guard !engine.isIdle else { return }  // nothing else alive: let the run end
            schedule(engine, times: rest.dropFirst())
        }
    }
}
