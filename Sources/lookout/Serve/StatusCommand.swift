import ArgumentParser
import Foundation
import LookoutAutomation
import LookoutModules
import LookoutStore
import LookoutWire

/// `lookout status`: the health of a running `lookout serve`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show how the scripts of a running `lookout serve` are doing.",
        discussion: """
            Reads <state>/serve-status.json, which serve rewrites every 2 s, and asks the status
            endpoint it names (GET http://127.0.0.1:PORT/status) for fresh data. Exit status 0 when
            every script runs, 1 when one has crashed or a component fails, 3 when serve is not running.
            """)

    @Option(help: "Ask this status endpoint instead (e.g. http://127.0.0.1:8765/status, or the server's address alone).")
    var url: String?

    @Flag(help: "Print the JSON document as it is.")
    var json = false

    @Option(help: ArgumentHelp("Show cluster NAME from the state database: instances, their lag and clock, which script runs where.",
                               valueName: "NAME"))
    var cluster: String?

    func run() async throws {
        let environment = try HostEnvironment.load()
        if let cluster { return try await showCluster(cluster, environment: environment) }
        var data: Data?
        var source = ""
        if let url {
            let endpoint = StatusCommand.endpoint(url)
            switch await StatusCommand.get(endpoint) {
            case .success(let body): data = body
            case .failure(let problem): throw HostSetupError(description: problem.description)
            }
            source = endpoint
        } else if let fileData = FileManager.default.contents(atPath: ServeStatus.file(environment.paths)) {
            data = fileData
            source = ServeStatus.file(environment.paths)
            if let document = try? HealthDocument.decode(fileData), let live = document.info["status_url"],
               let fresh = await StatusCommand.fetch(live) {
                data = fresh
                source = live
            }
        }
        guard let data else {
            FileHandle.standardError.write(Data("lookout status: serve is not running (no \(ServeStatus.file(environment.paths)))\n".utf8))
            throw ExitCode(3)
        }
        let document: HealthDocument
        do {
            document = try HealthDocument.decode(data)
        } catch {
            throw HostSetupError(description: "\(source) does not hold a status document: \(error)")
        }
        if json {
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(StatusTable.render(document, now: Date()), terminator: "")
        }
        let bad = document.entries.contains { $0.state == .crashed || $0.state == .failing || $0.state == .quarantined }
        if bad { throw ExitCode(1) }
    }

    /// `--cluster NAME`: exit status 0 when every piece of work runs on a live instance, 1 when
    /// some waits for one, 3 when the cluster has no live instance.
    private func showCluster(_ name: String, environment: HostEnvironment) async throws {
        let store = try StateBackends.shared(config: environment.config, paths: environment.paths)
        let view = try await store.clusterView(cluster: name)
        if json {
            let encoder = HealthDocument.encoder
            print(String(decoding: try encoder.encode(view), as: UTF8.self))
        } else {
            print(ClusterTable.render(view), terminator: "")
        }
        if view.live.isEmpty { throw ExitCode(3) }
        if view.held.count < view.leases.count { throw ExitCode(1) }
    }

    /// GET `url` with a short timeout; nil when nothing answers.
    static func fetch(_ url: String) async -> Data? {
        try? await get(url).get()
    }

    /// The status endpoint for `--url`: a server's address alone (`http://127.0.0.1:8765`, with or
    /// without `/`) means its `/status`.
    static func endpoint(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.host != nil,
              components.path.isEmpty || components.path == "/"
        else { return url }
        components.path = "/status"
        return components.string ?? url
    }

    /// Why `--url` gave no status document.
    struct FetchProblem: Error, CustomStringConvertible {
        let description: String
    }

    /// GET `url` with a short timeout: the body of a 200, else what went wrong (no answer, or the
    /// status the server answered with).
    static func get(_ url: String) async -> Result<Data, FetchProblem> {
        guard let target = URL(string: url), target.scheme == "http" || target.scheme == "https", target.host != nil else {
            return .failure(FetchProblem(description: "\(url) is not an http URL such as http://127.0.0.1:8765/status"))
        }
        let response: WireHTTPResponse
        do {
            response = try await WireHTTPClient.shared.send(
                WireHTTPRequest(method: "GET", url: target), timeout: .seconds(2), maximumBodyBytes: 8 << 20)
        } catch {
            return .failure(FetchProblem(description: "no answer from \(url): \(error)"))
        }
        guard response.status == 200 else {
            let text = String(decoding: response.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return .failure(FetchProblem(description: "\(url) answered HTTP \(response.status)" + (text.isEmpty ? "" : ": \(text)")))
        }
        return .success(response.body)
    }
}

/// The health document as a table for people.
enum StatusTable {
    static func render(_ document: HealthDocument, now: Date) -> String {
        var lines: [String] = []
        let pid = document.info["pid"].map { "pid \($0)" } ?? ""
        lines.append("lookout serve \(pid)" + (document.info["started"].map { ", started \($0)" } ?? ""))
        var rows: [[String]] = [["NAME", "STATE", "LAST OK", "NEXT RUN", "ERRORS", "RESTARTS", "LAST ERROR"]]
        for entry in document.entries {
            var state = entry.state.rawValue
            if let connected = entry.connected { state += connected ? " (connected)" : " (disconnected)" }
            if let restart = entry.nextRestart { state += " (restart \(relative(restart, now)))" }
            if let depth = entry.outboxDepth { state += " outbox \(depth)" }
            rows.append([
                entry.kind == "script" ? entry.name : "  " + entry.name, state,
                entry.lastSuccess.map { relative($0, now) } ?? "-",
                entry.nextRun.map { relative($0, now) } ?? "-",
                String(entry.errors), String(entry.restarts),
                entry.lastError.map { oneLine($0, limit: 60) } ?? "",
            ])
            for job in entry.jobs {
                let last = job.lastOK.map { $0 ? "ok" : "failed" } ?? (job.lastRun == nil ? "never ran" : "running")
                rows.append([
                    "  · \(job.name)", "\(job.kind) \(job.spec)",
                    job.lastRun.map { relative($0, now) } ?? "-",
                    job.next.map { relative($0, now) } ?? "-",
                    "", "", job.lastError.map { oneLine($0, limit: 60) } ?? last,
                ])
            }
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            var line = cells.joined(separator: "  ")
            while line.last == " " { line.removeLast() }  // trailing only: job and component rows keep their indent
            lines.append(line)
        }
        if document.entries.isEmpty { lines.append("(no scripts)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `in 4m`, `12s ago`.
    static func relative(_ date: Date, _ now: Date) -> String {
        let seconds = date.timeIntervalSince(now)
        let magnitude = abs(seconds)
        let text: String
        switch magnitude {
        case ..<60: text = "\(Int(magnitude))s"
        case ..<3600: text = "\(Int(magnitude / 60))m"
        case ..<86_400: text = "\(Int(magnitude / 3600))h\(Int(magnitude.truncatingRemainder(dividingBy: 3600) / 60))m"
        default: text = "\(Int(magnitude / 86_400))d"
        }
        return seconds >= 0 ? "in \(text)" : "\(text) ago"
    }

    static func oneLine(_ text: String, limit: Int) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? text
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }
}
