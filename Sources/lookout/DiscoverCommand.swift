import ArgumentParser
import Foundation
import SignalKKit

/// `lookout discover`: Signal K servers announced on the local network (mDNS / DNS-SD).
struct DiscoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "discover",
        abstract: "List Signal K servers announced on the local network (mDNS, no daemon needed).")

    @Option(help: "How long to listen, in seconds.")
    var timeout: Double = 3

    @Flag(help: "Only ask on the loopback interface (servers on this machine, e.g. `lookout sim signalk`).")
    var loopback = false

    func run() async throws {
        guard timeout > 0, timeout <= 60 else { throw ValidationError("--timeout must be between 0 and 60 seconds") }
        let services: [SignalKService]
        do {
            services = try await SignalKDiscovery.browse(
                timeout: .milliseconds(Int64(timeout * 1000)), interfaces: loopback ? [.loopback] : nil)
        } catch {
            throw HostSetupError(description: "discovery failed: \(error)")
        }
        guard !services.isEmpty else {
            print("no Signal K server answered within \(timeout) s")
            return
        }
        for service in services.sorted(by: { ($0.name, $0.type) < ($1.name, $1.type) }) {
            var line = "\(service.name)  \(service.type)  \(service.url?.absoluteString ?? "\(service.host):\(service.port)")"
            if let urn = service.selfURN { line += "  self \(urn)" }
            if !service.roles.isEmpty { line += "  roles \(service.roles.joined(separator: ","))" }
            print(line)
        }
    }
}
