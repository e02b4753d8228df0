import Foundation
import LookoutConfig
import LookoutModules
import LookoutWire
import SignalKKit

/// The boat values the web view shows per `[signalk.NAME]` profile, read once per snapshot over
/// Signal K's REST API: depth, apparent wind, position, each with its age.
enum WebBoat {
    /// The paths shown, with their labels.
    static let paths: [(path: String, label: String)] = [
        ("environment.depth.belowTransducer", "Depth"),
        ("environment.wind.speedApparent", "Wind speed (apparent)"),
        ("environment.wind.angleApparent", "Wind angle (apparent)"),
        ("navigation.position", "Position"),
    ]

    /// The values of profile `name`.
    static func read(profile name: String, config: HostConfig, environment: [String: String]) async -> WebSnapshot.Boat {
        var boat = WebSnapshot.Boat(profile: name, values: [])
        let connection: SignalKConnection
        do { connection = try SignalKConnection.profile(name, config: config, environment: environment) } catch {
            boat.problem = "this profile cannot be used (`lookout doctor` says why)"
            return boat
        }
        let token = connection.token
        var rest = SignalKREST(server: connection.server, tokenProvider: token.map { t in { @Sendable () async -> String? in t } })
        rest.requestTimeout = .seconds(5)
        var failures = 0
        for (path, label) in paths {
            do {
                let node = try await rest.get(path)
                guard let text = format(path: path, value: node["value"]) else { continue }
                let time = node["timestamp"]?.stringValue.flatMap(parseTime)
                boat.values.append(WebSnapshot.BoatValue(path: path, label: label, text: text, time: time))
            } catch {
                failures += 1  // never the error's text: it may name the server with its token
            }
        }
        if failures == paths.count { boat.problem = "cannot read this boat's values (`lookout doctor` says why)" }
        return boat
    }

    /// A value in the units people use aboard: metres, knots, degrees, degrees and minutes.
    static func format(path: String, value: JSONValue?) -> String? {
        switch path {
        case "navigation.position":
            guard let lat = value?["latitude"]?.doubleValue, let lon = value?["longitude"]?.doubleValue else { return nil }
            return String(format: "%.5f°, %.5f°", lat, lon)
        case "environment.wind.speedApparent":
            return value?.doubleValue.map { String(format: "%.1f kn", $0 * 1.943_844) }
        case "environment.wind.angleApparent":
            return value?.doubleValue.map { String(format: "%.0f°", $0 * 180 / .pi) }
        default:
            return value?.doubleValue.map { String(format: "%.1f m", $0) }
        }
    }

    static func parseTime(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
