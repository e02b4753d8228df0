import ArgumentParser
import Foundation
import LookoutSim
import Lua

/// `lookout sim signalk`.
struct SignalKSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signalk",
        abstract: "A Signal K server on 127.0.0.1 that behaves like signalk-server (discovery, REST, stream).",
        discussion: """
            Prints the discovery, REST and stream URLs, then serves until Ctrl-C. The data comes from \
            a generated boat sailing a loop off Helsinki (position, SOG/COG/heading, wind, depth, \
            water temperature, battery, an anchor alarm that raises and clears), or from a file of \
            recorded deltas (one JSON delta per line) with --playback.
            """)

    @Option(help: "Port to listen on (0 = any free port).")
    var port: Int = 0

    @Option(help: "Updates per second (0.01 to 200).")
    var rate: Double = 1

    @Option(help: "Seed of the generated boat.")
    var seed: UInt64 = 1

    @Option(help: "MMSI of the self vessel.")
    var mmsi: String = "230099999"

    @Option(help: "Play recorded deltas from this file (one JSON delta per line) instead of the boat.")
    var playback: String?

    func validate() throws {
        if !(rate >= 0.01 && rate <= 200) { throw ValidationError("--rate takes 0.01 to 200 updates per second") }
        if port < 0 || port > 65535 { throw ValidationError("--port takes 0 to 65535") }
        if mmsi.isEmpty || !mmsi.allSatisfy(\.isNumber) { throw ValidationError("--mmsi takes digits, got '\(mmsi)'") }
    }

    func run() async throws {
        let options = SignalKSimulator.Options(
            port: port, rate: rate, seed: seed, selfMMSI: mmsi,
            playback: playback.map { URL(fileURLWithPath: $0) })
        let simulator: SignalKSimulator
        let url: URL
        do {
            simulator = try SignalKSimulator(options: options)
            url = try await simulator.start()
        } catch {
            throw HostSetupError(description: "cannot start the Signal K simulator: \(error)")
        }
        say("Signal K simulator at \(url.absoluteString)/signalk")
        say("REST:   \(simulator.httpEndpoint.absoluteString)")
        say("stream: \(simulator.streamEndpoint.absoluteString)")
        say("self:   \(simulator.selfContext)")
        say(playback.map { "playing \($0) at \(rate) Hz" } ?? "generated boat (seed \(seed)) at \(rate) Hz")
        // Announced on loopback by mDNS, as signalk-server announces itself: `lookout discover --loopback`.
        let advertiser = SignalKMDNSAdvertiser(service: .init(
            instanceName: "Lookout simulator \(url.port ?? 0)", port: UInt16(url.port ?? 0),
            txt: SignalKMDNSAdvertiser.signalKTXT(selfURN: simulator.selfID, mmsi: mmsi)))
        do {
            try advertiser.start()
            say("announced by mDNS on 127.0.0.1")
        } catch {
            say("not announced by mDNS: \(error)")
        }
        await SimServing.untilInterrupted()
        advertiser.stop()
        await simulator.stop()
    }
}

/// A line on standard output, written at once (stdout may be a pipe).
private func say(_ text: String) { FileHandleOutput.standardOutput.write(text + "\n") }
