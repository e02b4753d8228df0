import Foundation
import LookoutWire
import LookoutTestSupport
import Lua
import XCTest

@testable import LookoutConfig
@testable import LookoutStore
@testable import LookoutModules

/// Runs `source` with the Nightscout module and profile `loop` (`url`, the simulator's API
/// secret and Loop OTP URL, then the TOML lines `settings`); `loop` is the connected client.
/// Asserts the script raised nothing; returns what it printed.
func runRemoteScript(_ source: String, url: URL, otpURL: String, settings: String, store: StateStore,
                     confirmation: RemoteConfirmation? = nil, file: StaticString = #filePath, line: UInt = #line) async throws
    -> [String]
{
    let config = try HostConfig(text: """
        [nightscout.loop]
        url = "\(url.absoluteString)"
        secret_env = "NS_SECRET"
        otp_url_env = "LOOP_OTP"
        \(settings)
        """)
    let environment = ["NS_SECRET": "this is my long pass phrase", "LOOP_OTP": otpURL]
    let (transcript, outcome) = try await runLua(
        "local nightscout = require 'nightscout'\nlocal loop = assert(nightscout.client 'loop')\n" + source,
        modules: [NightscoutModule(config: config, store: store, environment: environment, confirmation: confirmation)])
    XCTAssertEqual(transcript.errors.map(\.description), [], file: file, line: line)
    XCTAssertEqual(outcome.exitCode, 0, file: file, line: line)
    return transcript.lines
}

/// A terminal question that answers no, and the questions it was asked.
func decliningConfirmation() -> (RemoteConfirmation, Locked<[String]>) {
    let confirmation = RemoteConfirmation()
    let asked = Locked<[String]>([])
    confirmation.install { question in
        asked.withLock { $0.append(question) }
        return false
    }
    return (confirmation, asked)
}

/// Lua for the adversarial scripts: runs every function of `tricks` in its own task, five
/// rounds at once, and prints each result state (or `refused:<reason>`) with its count, sorted.
let adversarialRoundsLua = """
    local results, tasks = {}, {}
    for round = 1, 5 do
      for _, trick in ipairs(tricks) do
        tasks[#tasks + 1] = task.spawn(function()
          local r, err = trick()
          results[#results + 1] = r and r.state or ("refused:" .. tostring(err.reason or err.code))
        end)
      end
    end
    assert(task.all(tasks, 120))
    local counts, names = {}, {}
    for _, s in ipairs(results) do counts[s] = (counts[s] or 0) + 1 end
    for name in pairs(counts) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do print(name, counts[name]) end
    """
