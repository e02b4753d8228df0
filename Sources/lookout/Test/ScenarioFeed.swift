import Foundation
import LookoutScenarios
import LookoutSim
import LookoutWire

/// Puts a scenario's data into the simulators as virtual time passes: every reading and Loop
/// report dated at or before "now" is in the Nightscout simulator, and the boat's latest
/// position is published on the Signal K simulator. Called on the Lua thread at each jump of the
/// virtual clock, before the timers due at the new time fire, so a script that wakes at 01:35
/// sees exactly the data up to 01:35.
final class ScenarioFeed: Sendable {
    /// How far the feed got (it is called on one thread at a time; the lock makes that explicit).
    private struct Cursors {
        var nextReading = 0
        var nextLoop = 0
        var nextBoat = 0
        var anchorSent = false
    }

    private let cursors = Locked(Cursors())
    private let scenario: Scenario
    private let nightscout: NightscoutSimulator?
    private let signalK: SignalKSimulator?

    init(scenario: Scenario, nightscout: NightscoutSimulator?, signalK: SignalKSimulator?) {
        self.scenario = scenario
        self.nightscout = nightscout
        self.signalK = signalK
    }

    /// Feeds everything up to `now` and waits until the simulators hold it.
    func feed(upTo now: Date) {
        let (entries, statuses, boat) = cursors.withLock { c -> ([JSONValue], [JSONValue], [JSONValue]) in
            var entries: [JSONValue] = []
            while c.nextReading < scenario.readings.count, scenario.readings[c.nextReading].time <= now {
                let previous = c.nextReading > 0 ? scenario.readings[c.nextReading - 1] : nil
                entries.append(Self.entry(scenario.readings[c.nextReading], previous: previous))
                c.nextReading += 1
            }
            var statuses: [JSONValue] = []
            while c.nextLoop < scenario.loopReports.count, scenario.loopReports[c.nextLoop] <= now {
                statuses.append(Self.deviceStatus(scenario.loopReports[c.nextLoop]))
                c.nextLoop += 1
            }
            var boat: [JSONValue] = []
            if let trace = scenario.boat {
                var latest: Scenario.BoatSample?
                while c.nextBoat < trace.samples.count, trace.samples[c.nextBoat].time <= now {
                    latest = trace.samples[c.nextBoat]
                    c.nextBoat += 1
                }
                if let latest {
                    boat.append(Self.delta(latest, anchor: c.anchorSent ? nil : trace))
                    c.anchorSent = true
                }
            }
            return (entries, statuses, boat)
        }
        guard !entries.isEmpty || !statuses.isEmpty || !boat.isEmpty else { return }
        let nightscout = self.nightscout, signalK = self.signalK
        let done = DispatchSemaphore(value: 0)
        Task {
            if let nightscout {
                if !entries.isEmpty { await nightscout.seed("entries", entries) }
                if !statuses.isEmpty { await nightscout.seed("devicestatus", statuses) }
            }
            if let signalK { for delta in boat { await signalK.publish(delta) } }
            done.signal()
        }
        done.wait()  // on the Lua thread, never on the cooperative pool
    }

    static func iso(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: d)
    }

    static func entry(_ r: Scenario.Reading, previous: Scenario.Reading?) -> JSONValue {
        let ms = Int64((r.time.timeIntervalSince1970 * 1000).rounded())
        var e: [String: JSONValue] = [
            "type": "sgv", "sgv": .int(Int64(r.sgv)), "date": .int(ms), "dateString": .string(iso(r.time)),
            "sysTime": .string(iso(r.time)), "device": "lookout-test", "noise": 1, "utcOffset": 0,
        ]
        if let p = previous, r.time.timeIntervalSince(p.time) <= 600 {
            let slope = Double(r.sgv - p.sgv) / (r.time.timeIntervalSince(p.time) / 60)
            e["direction"] = .string(CGMGenerator.direction(slopePerMinute: slope).0)
            e["delta"] = .int(Int64(r.sgv - p.sgv))
        } else {
            e["direction"] = "NOT COMPUTABLE"
        }
        return .object(e)
    }

    static func deviceStatus(_ t: Date) -> JSONValue {
        let stamp = JSONValue.string(iso(t))
        return [
            "device": "loop://iPhone", "created_at": stamp, "utcOffset": 0,
            "loop": ["name": "Loop", "version": "3.4.0", "timestamp": stamp,
                     "iob": ["timestamp": stamp, "iob": 0.8], "cob": ["timestamp": stamp, "cob": 0],
                     "enacted": ["rate": 0.85, "duration": 30, "timestamp": stamp, "received": true]],
            "pump": ["clock": stamp, "manufacturer": "Insulet", "model": "Dash", "reservoir": 120, "suspended": false],
            "uploader": ["name": "iPhone", "timestamp": stamp, "battery": 64],
        ]
    }

    static func delta(_ s: Scenario.BoatSample, anchor: Scenario.BoatTrace?) -> JSONValue {
        var values: [JSONValue] = [
            ["path": "navigation.position", "value": ["latitude": .double(s.latitude), "longitude": .double(s.longitude)]],
            ["path": "navigation.speedOverGround", "value": 0.1],
        ]
        if let w = s.windSpeed { values.append(["path": "environment.wind.speedApparent", "value": .double(w)]) }
        if let d = s.depth { values.append(["path": "environment.depth.belowTransducer", "value": .double(d)]) }
        if let anchor {
            values.append(["path": "navigation.anchor.position",
                           "value": ["latitude": .double(anchor.anchorLatitude), "longitude": .double(anchor.anchorLongitude)]])
            values.append(["path": "navigation.anchor.maxRadius", "value": .double(anchor.radius)])
        }
        return ["updates": [["values": .array(values)]]]
    }
}
