import Foundation
import LookoutWire
import LookoutConfig
import SignalKKit

/// Tells `lookout serve`'s health how a boat's stream is doing: connected or not, the last
/// error in plain words, and when data last arrived (at most once a second, so a busy stream
/// costs nothing here).
struct SignalKHealthReporter: Sendable {
    let health: HealthRegistry
    /// The component's name, `signalk:<profile>`.
    let name: String
    let script: String
    private let lastReport = Locked<Date>(.distantPast)

    init(health: HealthRegistry, name: String, script: String) {
        self.health = health
        self.name = name
        self.script = script
    }

    /// Records a change of the stream's connection state in the component's health entry.
    public func state(_ s: SignalKConnectionState) {
        health.updateComponent(name, script: script) { entry in
            switch s {
            case .connected:
                entry.state = .ok
                entry.connected = true
                entry.lastSuccess = Date()
            case .waitingToReconnect(let attempt, let delay):
                entry.state = .failing
                entry.connected = false
                entry.lastError = "disconnected; reconnecting (attempt \(attempt)) in \(delay)"
                entry.lastErrorAt = Date()
            case .closed:
                entry.state = .stopped
                entry.connected = false
            case .idle, .connecting:
                entry.connected = false
            }
        }
    }

    /// Records why the stream closed a connection itself (a server that broke a bound).
    func error(_ e: SignalKStreamError) {
        health.updateComponent(name, script: script) { entry in
            entry.lastError = e.description
            entry.lastErrorAt = Date()
        }
    }

    func received() {
        let now = Date()
        let due = lastReport.withLock { last -> Bool in
            guard now.timeIntervalSince(last) >= 1 else { return false }
            last = now
            return true
        }
        if due { health.updateComponent(name, script: script) { $0.lastSuccess = now } }
    }
}
