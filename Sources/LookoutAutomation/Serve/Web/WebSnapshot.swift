import Foundation
import LookoutConfig
import LookoutModules
import LookoutStore
import LookoutWire
import NightscoutKit

/// Everything the web view shows at one moment, read-only: scripts and components (the health
/// registry), alerts, the remote-command audit and the outbox (the state store, through
/// `StateBackend` only) and each Nightscout profile's recent readings. It holds no secret: only
/// profile names, values and the texts the store and health already show in `lookout status`.
public struct WebSnapshot: Sendable {
    /// One alert with what its record adds: escalation step and the reading it judged.
    public struct Alert: Sendable {
        /// The stored status.
        public var status: AlertStatus
        /// The escalation step reached (0: the first notification).
        public var level: Int?
        /// The last reading the alert judged.
        public var value: Double?
        /// When that reading was taken.
        public var valueTime: Date?
    }

    /// One glucose reading.
    public struct Reading: Sendable, Equatable {
        /// When it was taken.
        public var time: Date
        /// mg/dL.
        public var mgdl: Double
        /// The trend arrow's wire text (`Flat`, `SingleDown`…).
        public var direction: String?
    }

    /// A treatment marked on the chart: a bolus or carbs.
    public struct Mark: Sendable, Equatable {
        /// When it was given.
        public var time: Date
        /// `bolus` or `carbs`.
        public var kind: String
        /// "2 U bolus", "30 g carbs".
        public var text: String
    }

    /// One Nightscout profile's chart.
    public struct Glucose: Sendable {
        /// The profile's name (`[nightscout.NAME]`).
        public var profile: String
        /// Whether values show in mmol/L (`units = "mmol"` in the profile).
        public var mmol: Bool
        /// Target range, mg/dL.
        public var targetLow: Double, targetHigh: Double
        /// The urgent-low line, mg/dL.
        public var urgentLow: Double
        /// Readings in the window, oldest first.
        public var readings: [Reading]
        /// Boluses and carbs in the window (none when treatments cannot be read).
        public var marks: [Mark] = []
        /// Why there are none, when the site could not be read.
        public var problem: String?
    }

    /// One value of a boat.
    public struct BoatValue: Sendable {
        /// The Signal K path.
        public var path: String
        /// What people call it.
        public var label: String
        /// The value with its unit.
        public var text: String
        /// When the boat measured it.
        public var time: Date?
    }

    /// One Signal K profile's values.
    public struct Boat: Sendable {
        /// The profile's name (`[signalk.NAME]`).
        public var profile: String
        /// The values it has, in `WebBoat.paths` order.
        public var values: [BoatValue]
        /// Why there are none, when the server could not be read.
        public var problem: String?
    }

    /// When it was taken (the scripts' clock).
    public var now: Date
    /// The chart's window in hours.
    public var hours: Int
    /// Scripts and components.
    public var health: [HealthRegistry.Entry]
    /// Alerts, by id.
    public var alerts: [Alert]
    /// The newest remote-command audit rows, newest first.
    public var audit: [AuditRecordRow]
    /// Pending and failed outbox items, newest first.
    public var outbox: [OutboxItem]
    /// Per Nightscout profile.
    public var glucose: [Glucose]
    /// Per Signal K profile.
    public var boats: [Boat] = []
    /// Each script's recent output lines, oldest first, secrets redacted (by script name).
    public var lines: [String: [String]] = [:]
    /// What could not be read from the store, if anything.
    public var storeProblem: String?
}

/// Takes `WebSnapshot`s for the web view.
public struct WebSnapshotSource: Sendable {
    let health: HealthRegistry
    let paths: LookoutPaths
    let config: HostConfig
    let environment: [String: String]
    let lines: ScriptLogLines?
    /// Every secret the configuration reaches: never shown in a script's lines.
    let secrets: [String]

    /// The chart windows a page may ask for, in hours.
    public static let windows = [3, 6, 12, 24]
    /// How long readings and boat values are reused before the servers are asked again, seconds.
    public static let remoteRefresh: TimeInterval = 5

    struct RemoteValues {
        var at: Date
        var glucose: [WebSnapshot.Glucose]
        var boats: [WebSnapshot.Boat]
    }

    private let cache = Locked<[Int: RemoteValues]>([:])

    /// How many of a script's latest lines the page shows.
    public static let linesShown = 20

    /// A source over `health`, the scripts' `lines` and the state and config at `paths`.
    public init(health: HealthRegistry, paths: LookoutPaths, config: HostConfig,
                environment: [String: String] = ProcessInfo.processInfo.environment, lines: ScriptLogLines? = nil) {
        self.health = health
        self.paths = paths
        self.config = config
        self.environment = environment
        self.lines = lines
        secrets = lines == nil ? [] : SupportBundle.reachableSecrets(config: config, environment: environment)
    }

    /// The snapshot now, with a chart of the last `hours`.
    public func take(hours: Int = 6) async -> WebSnapshot {
        let now = StoryClock.load(paths)?.now() ?? Date()
        var snapshot = WebSnapshot(now: now, hours: hours, health: health.snapshot(), alerts: [], audit: [], outbox: [],
                                   glucose: [])
        if let lines {
            for entry in snapshot.health where entry.kind == "script" {
                let recent = lines.recent(script: entry.name).suffix(Self.linesShown)
                // A script cannot read a secret, but one may be in its source or come back in a reply.
                if !recent.isEmpty { snapshot.lines[entry.name] = recent.map { Redaction.text($0, secrets: secrets) } }
            }
        }
        do {
            let store = try StateBackends.shared(paths: paths)
            // Alerting ones first: a person woken at night looks for them.
            for status in try await store.alertStatuses().sorted(by: { ($0.isAlerting ? 0 : 1, $0.id) < ($1.isAlerting ? 0 : 1, $1.id) }) {
                var alert = WebSnapshot.Alert(status: status)
                if let record = try? await store.alertRecord(id: status.id),
                   let object = try? JSONSerialization.jsonObject(with: Data(record.data.utf8)) as? [String: Any] {
                    alert.level = (object["level"] as? NSNumber)?.intValue
                    alert.value = (object["value"] as? NSNumber)?.doubleValue
                    alert.valueTime = (object["time"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue / 1000) }
                }
                snapshot.alerts.append(alert)
            }
            snapshot.audit = (try await store.auditLog(site: nil, limit: 30)).reversed()
            snapshot.outbox = (try await store.items(site: nil, states: [.pending, .failed], limit: 30)).reversed()
        } catch {
            snapshot.storeProblem = "the state database cannot be read: \(error)"
        }
        let (glucose, boats) = await remote(hours: hours, now: now)
        snapshot.glucose = glucose
        snapshot.boats = boats
        return snapshot
    }

    /// What comes from the servers (Nightscout readings, boat values), read at most every
    /// `remoteRefresh` seconds per chart window however many pages are open: each open page's live
    /// stream takes a snapshot every second, and a Nightscout site should not get a request per
    /// second per page.
    func remote(hours: Int, now: Date) async -> ([WebSnapshot.Glucose], [WebSnapshot.Boat]) {
        let real = Date()
        if let cached = cache.withLock({ $0[hours] }), real.timeIntervalSince(cached.at) < Self.remoteRefresh {
            return (cached.glucose, cached.boats)
        }
        var glucose: [WebSnapshot.Glucose] = [], boats: [WebSnapshot.Boat] = []
        for name in config.profiles(service: "nightscout") {
            glucose.append(await self.glucose(profile: name, hours: hours, now: now))
        }
        for name in config.profiles(service: "signalk") {
            boats.append(await WebBoat.read(profile: name, config: config, environment: environment))
        }
        cache.withLock { $0[hours] = RemoteValues(at: real, glucose: glucose, boats: boats) }
        return (glucose, boats)
    }

    /// The readings of one profile (sgv entries of the window, at most 24 h × 12 + 12).
    func glucose(profile name: String, hours: Int, now: Date) async -> WebSnapshot.Glucose {
        let settings = config.profile(service: "nightscout", name: name)
        let units = ((try? settings?.string("units")) ?? nil)?.lowercased() ?? "mg/dl"
        func number(_ key: String, _ fallback: Double) -> Double {
            guard let text = (try? settings?.string(key)) ?? nil, let value = Double(text) else {
                if let integer = (try? settings?.integer(key)) ?? nil { return Double(integer) }
                return fallback
            }
            return value
        }
        var glucose = WebSnapshot.Glucose(profile: name, mmol: units.hasPrefix("mmol"), targetLow: number("target_low", 70),
                                          targetHigh: number("target_high", 180), urgentLow: number("urgent_low", 54),
                                          readings: [])
        do {
            let connection = try NightscoutConnection.profile(name, config: config, environment: environment)
            let client = NightscoutClient(configuration: connection.configuration, timeout: 10)
            let from = now.addingTimeInterval(-Double(hours) * 3600)
            let entries = try await client.entries(try .entries(type: .sgv, from: from, through: now.addingTimeInterval(600),
                                                                count: hours * 12 + 12))
            glucose.readings = entries.compactMap { entry in
                guard let sgv = entry.sgv, let time = entry.common.date?.date else { return nil }
                return WebSnapshot.Reading(time: time, mgdl: sgv, direction: entry.direction?.rawValue)
            }.sorted { $0.time < $1.time }
            // Treatments are a help, not the point: without them the chart still shows.
            let treatments = (try? await client.treatments(try .treatments(from: from, through: now.addingTimeInterval(600),
                                                                            count: hours * 24 + 24))) ?? []
            for treatment in treatments {
                guard let time = (treatment.common.createdAt ?? treatment.common.date)?.date else { continue }
                if let insulin = treatment.insulin, insulin > 0 {
                    glucose.marks.append(WebSnapshot.Mark(time: time, kind: "bolus", text: "\(WebHTML.number(insulin)) U bolus"))
                }
                if let carbs = treatment.carbs, carbs > 0 {
                    glucose.marks.append(WebSnapshot.Mark(time: time, kind: "carbs", text: "\(WebHTML.number(carbs)) g carbs"))
                }
            }
            glucose.marks.sort { $0.time < $1.time }
        } catch {
            // Never the error's text: it may name the site with its credentials.
            glucose.problem = "cannot read this profile's entries (`lookout doctor` says why)"
        }
        return glucose
    }
}
