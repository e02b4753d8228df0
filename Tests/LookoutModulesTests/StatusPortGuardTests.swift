import Foundation
import XCTest

@testable import LookoutModules

/// The `http` module's refusal of the host's own status port (issue 24 §1): every loopback spelling
/// of that port, and nothing else.
final class StatusPortGuardTests: XCTestCase {
    func testEveryLoopbackSpellingOfTheStatusPortIsRefusedAndNothingElse() throws {
        let port = 58_765
        ServeStatusAddress.add(port: port)
        defer { ServeStatusAddress.remove(port: port) }
        let refused = ["127.0.0.1", "localhost", "LOCALHOST.", "127.1", "127.0.0.2", "0x7f.0.0.1", "0177.0.0.1", "2130706433",
                       "0.0.0.0", "0", "[::1]", "[0:0:0:0:0:0:0:1]", "[::]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "sub.localhost"]
        for host in refused {
            let url = "http://\(host):\(port)/ack/urgent-low"
            XCTAssertThrowsError(try StatusPortGuard.check(url, method: "POST"), host) { error in
                let failure = error as? HTTPFailure
                XCTAssertEqual(failure?.luaError.code, "refused", host)
                XCTAssertTrue(failure?.luaError.message.contains("status server") == true, "\(error)")
            }
        }
        for url in ["http://127.0.0.1:\(port + 1)/ack/x", "http://192.0.2.1:\(port)/ack/x", "http://[2001:db8::1]:\(port)/",
                    "http://127.0.0.1/ack/x", "https://localhost/status"] {
            XCTAssertNoThrow(try StatusPortGuard.check(url, method: "GET"), url)
        }
    }
}
