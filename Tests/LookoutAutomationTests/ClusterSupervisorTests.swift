import Foundation
import Lua
import LookoutModules
import LookoutStore
import XCTest

@testable import LookoutAutomation

/// `ServeSupervisor` with a cluster member: what the member gives up reaches the other
/// instances, whether or not its script ever started here.
final class ClusterSupervisorTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "/lookout-cluster-serve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(atPath: folder) }

    /// An instance that took every piece while alone, then saw a second one join before its
    /// supervisor started anything, gives up its surplus: the pieces it never started are
    /// released (before the fix they were renewed for good and no instance ran them).
    func testWorkGivenUpBeforeItsScriptStartedReachesTheOthers() async throws {
        let store = try StateStore(path: folder + "/lookout.sqlite3")
        let work = (1...6).map { "s\($0).lua" }
        for name in work { try "timer.every(1, function() end)".write(toFile: folder + "/scripts/" + name, atomically: true, encoding: .utf8) }
        let a = ClusterMember(settings: ClusterSettings(name: "t", instance: "a", ttl: 60), store: store, log: { _ in })
        let b = ClusterMember(settings: ClusterSettings(name: "t", instance: "b", ttl: 60), store: store, log: { _ in })
        await a.setWork(work)
        await a.tick()  // alone: a holds all six, and no script runs yet
        await b.setWork(work)
        await b.tick()  // b is live and finds nothing free
        var held = 0
        for piece in work where await a.holding(piece) != nil { held += 1 }
        XCTAssertEqual(held, 6)

        let factory = ServeScriptFactory(
            options: { file in
                var options = LuaOptions()
                options.name = (file as NSString).lastPathComponent
                options.memoryLimit = 16 << 20
                return options
            },
            modules: { _ in [] })
        var settings = ServeSettings()
        settings.drainDeadline = 1
        let supervisor = ServeSupervisor(discovery: ScriptDiscovery(paths: [folder + "/scripts"]), factory: factory,
                                         settings: settings, health: HealthRegistry(), cluster: a, log: { _ in })
        await supervisor.start()  // a's heartbeat gives up three pieces it never started
        var taken: [String] = [], running: [String] = []
        for _ in 0..<5 {  // heartbeats and scans, whichever order they come in
            await b.tick()
            await a.tick()
            await supervisor.rescan()
            taken = []
            for piece in work where await b.holding(piece) != nil { taken.append(piece) }
            running = await supervisor.files
            if taken.count + running.count == work.count { break }
        }
        XCTAssertEqual(taken.count, 3, "b takes the pieces a gave up (a runs \(running))")
        XCTAssertEqual(Set(taken).intersection(running), [], "no piece runs twice")
        await supervisor.stop()
    }
}
