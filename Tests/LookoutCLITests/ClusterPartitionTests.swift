import Foundation
import Hummingbird
import LookoutConfig
import LookoutStore
import LookoutTestSupport
import XCTest

/// Issue 25 §3: one `serve --cluster` instance on another host (its own network namespace,
/// joined to this one by a veth pair) is cut off from the database and from everything else by
/// taking the link down. The instance on this host takes its work over within the lease and a
/// renewal; the cut-off instance stops its scripts when its leases run out (it never hears from
/// the database); when the link comes back it rejoins and the work is shared again. No script
/// ever ran on both at once: each ticker's posts come from one holding at a time.
///
/// The services (PostgreSQL, the recorder) listen on this host's loopback, as everywhere in the
/// tests; a relay on the veth address carries the other host's connections to them, so the link
/// going down cuts every connection of that host.
final class ClusterPartitionTests: CLITestCase, @unchecked Sendable {
    // @unchecked Sendable: as CLITestCase.

    private let ttl: TimeInterval = 3
    private var namespace = ""
    private var hostLink = ""

    override func tearDown() {
        if !namespace.isEmpty { _ = Self.ip(["netns", "del", namespace]) }
        super.tearDown()
    }

    func testInstanceCutOffFromTheDatabaseStopsAndTheOtherTakesOver() async throws {
        guard Self.privileged != nil else {
            throw skipTest("network namespaces need root, or sudo without a password (.ci/run has one of them)")
        }
        let database = try PostgresTestCluster.forTest()
        let location = try PostgresLocation.parse(try database.createDatabase(prefix: "partition"))
        let view = try await PostgresStateStore.open(location: location, password: database.adminPassword, timeout: .seconds(2))
        defer { view.close() }
        let hook = WebhookRecorder()
        let recorder = try await HTTPTestServer.start(router: hook.router())
        defer { Task { await recorder.stop() } }

        // The other host: a namespace and a veth pair 10.77.N.1 (here) – 10.77.N.2 (there).
        let n = Int.random(in: 1...250)
        namespace = "lookout-test-\(getpid())-\(n)"
        hostLink = "lkh\(n)x\(getpid() % 10000)"
        let otherLink = "lko\(n)x\(getpid() % 10000)"
        let here = "10.77.\(n).1", there = "10.77.\(n).2"
        for command in [
            ["netns", "add", namespace],
            ["link", "add", hostLink, "type", "veth", "peer", "name", otherLink],
            ["link", "set", otherLink, "netns", namespace],
            ["addr", "add", here + "/30", "dev", hostLink],
            ["link", "set", hostLink, "up"],
            ["netns", "exec", namespace, "ip", "addr", "add", there + "/30", "dev", otherLink],
            ["netns", "exec", namespace, "ip", "link", "set", otherLink, "up"],
            ["netns", "exec", namespace, "ip", "link", "set", "lo", "up"],
        ] {
            let (status, output) = Self.ip(command)
            XCTAssertEqual(status, 0, "ip \(command.joined(separator: " ")): \(output)")
            guard status == 0 else { return }
        }
        let relay = try ChildProcess.spawn(
            executable: "/usr/bin/python3",
            arguments: ["-c", Self.relayScript, "\(here):0=127.0.0.1:\(database.port)", "\(here):0=127.0.0.1:\(recorder.port)"],
            environment: ["PATH": "/usr/bin:/bin"], directory: nil)
        defer { relay.closeInput() }
        XCTAssertTrue(relay.waitForOutput(containing: "\n", timeout: 10), "the relay did not start: \(relay.output(.stderr))")
        let ports = relay.output().split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
        XCTAssertEqual(ports.count, 2, "relay: \(ports)")

        // Each host's config names the services as that host reaches them; the scripts are the same files.
        let farHome = root + "/far-home"
        try FileManager.default.createDirectory(atPath: farHome, withIntermediateDirectories: true)
        try config(database: location.description.replacingOccurrences(of: "127.0.0.1:\(database.port)", with: "\(here):\(ports[0])"),
                   ticks: "http://\(here):\(ports[1])/tick").write(toFile: farHome + "/config.toml", atomically: true, encoding: .utf8)
        try config(database: location.description, ticks: "http://127.0.0.1:\(recorder.port)/tick")
            .write(toFile: home + "/config.toml", atomically: true, encoding: .utf8)
        let tickers = (1...4).map { "ticker-\($0).lua" }
        for name in tickers { try writeFile("scripts/" + name, Self.ticker) }

        let env = ["LOOKOUT_DB_PASSWORD": database.adminPassword]
        let near = try launch(serve("near"), environment: env)
        let binary = try LookoutBinary.require()
        let farEnvironment = environment(env.merging(["LOOKOUT_HOME": farHome]) { _, new in new })
        let privileged = try XCTUnwrap(Self.privileged)
        // (sudo clears the environment: env sets it again inside.)
        let far = try ChildProcess.spawn(
            executable: privileged[0],
            arguments: Array(privileged.dropFirst()) + ["/usr/bin/env"] + farEnvironment.map { "\($0.key)=\($0.value)" }
                + ["/usr/sbin/ip", "netns", "exec", namespace, binary] + serve("far"),
            environment: farEnvironment, directory: work)
        defer { far.send(signal: SIGKILL); near.send(signal: SIGTERM) }
        let logs = { "--- near:\n\(near.output(.stderr).suffix(2000))\n--- far:\n\(far.output(.stderr).suffix(2000))" }

        try await eventually("both instances share the tickers", logs: logs) {
            let held = try await self.holders(view)
            return held.count == 4 && Set(held.values) == ["near", "far"] && held.values.filter { $0 == "far" }.count == 2
        }
        try await eventually("every ticker ticks", logs: logs) { hook.tickers.count == 4 }

        // Take the link down: the far host loses the database and the recorder at once.
        let farHeld = try await holders(view).filter { $0.value == "far" }.keys.sorted()
        let farLogged = far.output(.stderr).count
        XCTAssertEqual(Self.ip(["link", "set", hostLink, "down"]).status, 0)
        let cut = Date()
        try await eventually("the near instance runs every ticker", timeout: 4 * (ttl + ttl / 3), logs: logs) {
            let held = try await self.holders(view)
            return held.count == 4 && held.values.allSatisfy { $0 == "near" }
        }
        print("takeover after the link went down: \(String(format: "%.1f", Date().timeIntervalSince(cut))) s")
        try await eventually("the far instance stops its scripts as their leases run out", logs: logs) {
            let since = String(far.output(.stderr).dropFirst(farLogged))
            return farHeld.allSatisfy { since.contains("\($0): its lease moved on; stopping it here") }
        }

        // The link comes back: the far instance rejoins and the work is shared again.
        let ticksBefore = hook.ticks.count
        XCTAssertEqual(Self.ip(["link", "set", hostLink, "up"]).status, 0)
        try await eventually("the far instance rejoins and takes its share", timeout: 30, logs: logs) {
            let held = try await self.holders(view)
            return held.count == 4 && held.values.filter { $0 == "far" }.count == 2
        }
        try await eventually("ticks go on", logs: logs) { hook.ticks.count > ticksBefore + 20 }

        // One holding at a time for every ticker: no tick *started* (its sender's clock, in
        // seconds) after the next holding's first tick. A request on the wire when the link went
        // down may arrive after the link is back: that is when it arrives, not when it started.
        for ticker in hook.tickers {
            XCTAssertNil(WebhookRecorder.overlap(in: hook.ticks.filter { $0.hasPrefix(ticker + " ") }), "\(ticker)\n\(logs())")
        }
    }

    // MARK: Helpers

    private func serve(_ name: String) -> [String] {
        ["serve", "--cluster", "partition", "--instance", name, "--lease", "\(Int(ttl))s", "--drain", "2s", "--status-port", "0",
         work + "/scripts"]
    }

    private func config(database: String, ticks: String) -> String {
        var text = """
            [state]
            url = "\(database)"
            password_env = "LOOKOUT_DB_PASSWORD"
            tls = "disable"

            """
        for n in 1...4 { text += "[scripts.\"ticker-\(n).lua\".settings]\nurl = \"\(ticks)\"\n" }
        return text
    }

    /// Posts `NAME N TIME` every 0.1 s: N counts the holdings of the script (a shared counter in
    /// the store: every Lua state that runs it gets a new number, on whichever instance), TIME is
    /// when the post started.
    private static let ticker = """
        local http = require "http"
        local config = require "config"
        local script = require "script"
        local store = require "store"
        local s = config.settings { url = "" }
        local token = script.name .. " " .. tostring(assert(store.update("holding", function(n) return (n or 0) + 1 end)))
        timer.every(0.1, function() http.post(s.url, token .. " " .. os.time()) end)
        """

    /// A TCP relay: for each `LISTEN_IP:PORT=TARGET_IP:PORT` argument it listens (port 0: any)
    /// and carries every connection to the target; prints the ports it listens on, then runs
    /// until its stdin closes.
    private static let relayScript = """
        import socket, sys, threading
        def pump(a, b):
            try:
                while True:
                    data = a.recv(65536)
                    if not data: break
                    b.sendall(data)
            except OSError: pass
            for s in (a, b):
                try: s.shutdown(socket.SHUT_RDWR)
                except OSError: pass
        def serve(listener, target):
            while True:
                client, _ = listener.accept()
                try: upstream = socket.create_connection(target)
                except OSError:
                    client.close(); continue
                threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
                threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
        ports = []
        for pair in sys.argv[1:]:
            listen, target = pair.split("=")
            host, port = listen.rsplit(":", 1)
            target_host, target_port = target.rsplit(":", 1)
            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((host, int(port)))
            listener.listen(64)
            ports.append(str(listener.getsockname()[1]))
            threading.Thread(target=serve, args=(listener, (target_host, int(target_port))), daemon=True).start()
        print(" ".join(ports), flush=True)
        sys.stdin.read()
        """

    /// How to run a command as root: directly (`/usr/bin/env`) when the tests run as root, else
    /// through `sudo -n` when it needs no password; nil when neither.
    static let privileged: [String]? = {
        if getuid() == 0 { return ["/usr/bin/env"] }
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/sudo")
        check.arguments = ["-n", "true"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return nil }
        check.waitUntilExit()
        return check.terminationStatus == 0 ? ["/usr/bin/sudo", "-n"] : nil
    }()

    @discardableResult
    private static func ip(_ arguments: [String]) -> (status: Int32, output: String) {
        guard let privileged else { return (-1, "no root and no sudo") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: privileged[0])
        process.arguments = Array(privileged.dropFirst()) + ["/usr/sbin/ip"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    private func holders(_ store: PostgresStateStore) async throws -> [String: String] {
        try await store.clusterView(cluster: "partition").held.compactMapValues(\.holder)
    }
}
