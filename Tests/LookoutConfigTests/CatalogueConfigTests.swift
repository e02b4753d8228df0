import LookoutConfig
import XCTest

/// The profile catalogue's profiles: checked as config.toml's are, merged under the file's own.
final class CatalogueConfigTests: XCTestCase {
    private let sites = """
        [nightscout.child1]
        url = "https://one.example"
        secret_env = "CHILD1_SECRET"
        max_bolus = 2

        [nightscout."child two"]
        url = "https://two.example"
        token_file = "/etc/lookout/secrets/child2"
        """

    func testImportedProfilesWorkAsTheFilesOwn() throws {
        let entries = try HostConfig.catalogueEntries(fromTOML: sites, fileName: "sites.toml")
        XCTAssertEqual(entries.map(\.name), ["child1", "child two"])
        let file = try HostConfig(text: """
            [nightscout.home]
            url = "https://home.example"

            [serve.bind]
            "low.lua" = ["nightscout.child*"]
            """)
        let (config, shadowed) = try file.addingCatalogue(entries)
        XCTAssertEqual(shadowed, [])
        XCTAssertEqual(config.profiles(service: "nightscout"), ["child two", "child1", "home"])
        let child = try XCTUnwrap(config.profile(service: "nightscout", name: "child1"))
        XCTAssertEqual(try child.string("url"), "https://one.example")
        XCTAssertEqual(try child.integer("max_bolus"), 2)
        XCTAssertTrue(child.hasSecret("secret"))
        XCTAssertEqual(child.fileName, HostConfig.catalogueName, "messages about it name the catalogue")
        XCTAssertEqual(config.serveBindings(file: "Scripts/low.lua").map(\.profile), ["child two", "child1"])
        XCTAssertNil(config.publicValue(path: "nightscout.child1.secret_env"), "scripts never see where a secret is")
        XCTAssertNotEqual(config.profileRevision(service: "nightscout", name: "child1"),
                          try file.addingCatalogue([.init(service: "nightscout", name: "child1", body: "url = \"https://other.example\"")])
                              .config.profileRevision(service: "nightscout", name: "child1"))
    }

    func testTheFilesProfileWinsAndIsNamed() throws {
        let file = try HostConfig(text: "[nightscout.child1]\nurl = \"https://mine.example\"\n")
        let (config, shadowed) = try file.addingCatalogue(try HostConfig.catalogueEntries(fromTOML: sites, fileName: "sites.toml"))
        XCTAssertEqual(shadowed, ["nightscout.child1"])
        XCTAssertEqual(try config.profile(service: "nightscout", name: "child1")?.string("url"), "https://mine.example")
    }

    func testSecretsInTheClearAndRelativeSecretFilesAreRefused() {
        let cases: [(String, String)] = [
            ("[nightscout.c]\nurl = \"https://c.example\"\nsecret = \"hunter2hunter2\"\n", "nightscout.c.secret"),
            ("[nightscout.c]\nurl = \"https://c.example\"\nsecret_file = \"secrets/c\"\n", "absolute path"),
            ("[limits]\nmemory = \"64MB\"\n", "only service profiles"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try HostConfig.catalogueEntries(fromTOML: text, fileName: "sites.toml"), text) { error in
                let message = String(describing: error)
                XCTAssertTrue(message.contains(expected), message)
                XCTAssertTrue(message.contains("sites.toml"), message)
                XCTAssertFalse(message.contains("hunter2"), "the secret is never echoed: \(message)")
            }
        }
        // An entry changed in the database behind Lookout's back is checked again when merged.
        XCTAssertThrowsError(try HostConfig().addingCatalogue([.init(service: "nightscout", name: "c", body: "api_secret = \"hunter2hunter2\"")])) {
            XCTAssertTrue(String(describing: $0).contains(HostConfig.catalogueName), "\($0)")
        }
    }
}
