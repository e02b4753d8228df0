import Foundation
import LookoutAutomation
import LookoutConfig
import LookoutModules
import LookoutWire
import Lua

/// The status endpoint and the status file of a running `serve`.
///
/// The file `<state>/serve-status.json` holds the same document as `GET /status` (with
/// `info.status_url` when the endpoint is on) and is rewritten every 2 seconds; `lookout status`
/// reads it, and asks the endpoint it names for fresh data.
final class ServeStatus: Sendable {
    /// The endpoint's URL, when on.
    let url: String?
    /// The web view's own listener (`[serve] web`), when configured: its base URL.
    let webURL: String?
    private let server: StatusServer?
    private let web: StatusServer?
    private let writer: Task<Void, Never>
    private let file: String

    private init(url: String?, webURL: String?, server: StatusServer?, web: StatusServer?, writer: Task<Void, Never>, file: String) {
        self.url = url
        self.webURL = webURL
        self.server = server
        self.web = web
        self.writer = writer
        self.file = file
    }

    /// The status file of a state directory.
    static func file(_ paths: LookoutPaths) -> String { paths.stateDirectory + "/serve-status.json" }

    /// Starts the endpoint (unless `port` is 0), the web view's own listener (with `web`: its
    /// `webRoutes` only, no `/status`) and the status file writer.
    static func start(
        port: Int, health: HealthRegistry, paths: LookoutPaths, extraRoutes: [StatusRoute], door: StatusDoor = StatusDoor(),
        web: HostConfig.ServeWeb? = nil, webRoutes: [StatusRoute] = [], log: ServeLog
    ) async throws -> ServeStatus {
        let started = ISO8601DateFormatter().string(from: Date())
        let pid = String(getpid())
        let urlBox = StatusURLBox(nil), webBox = StatusURLBox(nil)
        let info: @Sendable () -> [String: String] = {
            var info = ["pid": pid, "started": started]
            if let url = urlBox.value { info["status_url"] = url }
            if let url = webBox.value { info["web_url"] = url }
            return info
        }
        var server: StatusServer?
        if port != 0 {
            let candidate = StatusServer(health: health, info: info, extraRoutes: extraRoutes, door: door)
            do {
                let bound = try await candidate.start(port: port)
                urlBox.value = "http://127.0.0.1:\(bound)/status"
                server = candidate
            } catch {
                throw HostSetupError(description: "status endpoint: \(error) (another serve running? use --status-port 0 or another port)")
            }
        }
        var webServer: StatusServer?
        if let web {
            let candidate = StatusServer(health: health, info: info, extraRoutes: webRoutes, door: door, statusDocument: false)
            let tls = web.tlsCertificate.flatMap { cert in web.tlsKey.map { StatusServer.TLSFiles(certificate: cert, key: $0) } }
            do {
                let bound = try await candidate.start(port: web.port, address: web.address, tls: tls)
                let host = ["0.0.0.0", "::"].contains(web.address) ? "127.0.0.1" : web.address.contains(":") ? "[\(web.address)]" : web.address
                webBox.value = "\(tls == nil ? "http" : "https")://\(host):\(bound)"
                webServer = candidate
            } catch {
                await server?.stop()
                throw HostSetupError(description: "[serve] web: \(error) (another serve running? change [serve] web's port)")
            }
        }
        _ = try? paths.createStateDirectory()
        let file = ServeStatus.file(paths)
        let writer = Task {
            while !Task.isCancelled {
                let data = health.json(now: Date(), extra: info())
                try? data.write(to: URL(fileURLWithPath: file), options: .atomic)
                try? await Task.sleep(for: .seconds(2))
            }
        }
        return ServeStatus(url: urlBox.value, webURL: webBox.value, server: server, web: webServer, writer: writer, file: file)
    }

    /// Stops the endpoint and the writer and marks the file as stopped.
    func stop() async {
        writer.cancel()
        await server?.stop()
        await web?.stop()
        try? FileManager.default.removeItem(atPath: file)
    }
}

/// The status URL, set once the endpoint listens, read by each request.
final class StatusURLBox: Sendable {
    private let stored: Locked<String?>
    init(_ value: String?) { stored = Locked(value) }
    var value: String? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
