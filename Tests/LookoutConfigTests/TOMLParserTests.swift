import XCTest

@testable import LookoutConfig

final class TOMLParserTests: XCTestCase {
    // MARK: Valid documents

    /// (name, document, expected root table)
    static let valid: [(String, String, TOMLTable)] = [
        ("empty", "", [:]),
        ("only comments", "# hello\n\n   # world\n", [:]),
        (
            "bare keys", "key = 1\nbare_key = 2\nbare-key = 3\n1234 = 4",
            ["key": 1, "bare_key": 2, "bare-key": 3, "1234": 4]
        ),
        (
            "quoted keys", "\"127.0.0.1\" = \"v\"\n\"ʎǝʞ\" = 1\n'quoted \"value\"' = 2\n\"\" = 3",
            ["127.0.0.1": "v", "ʎǝʞ": 1, "quoted \"value\"": 2, "": 3]
        ),
        (
            "dotted keys", "name.first = \"a\"\nname . last = \"b\"\nsite.\"google.com\" = true",
            ["name": ["first": "a", "last": "b"], "site": ["google.com": true]]
        ),
        ("whitespace and comment after value", "a = 1   # one\n\tb = 2\t", ["a": 1, "b": 2]),
        ("crlf", "a = 1\r\nb = \"x\"\r\n", ["a": 1, "b": "x"]),
        ("bom", "\u{FEFF}a = 1", ["a": 1]),
        (
            "basic string escapes", #"s = "tab\there \"q\" back\\slash \u00E9 \U0001F600 \b\f\n\r""#,
            ["s": .string("tab\there \"q\" back\\slash é 😀 \u{08}\u{0C}\n\r")]
        ),
        ("literal string", #"s = 'C:\Users\nodejs\templates'"#, ["s": #"C:\Users\nodejs\templates"#]),
        ("multi-line basic trims first newline", "s = \"\"\"\nRoses\nViolets\"\"\"", ["s": "Roses\nViolets"]),
        ("multi-line basic crlf normalized", "s = \"\"\"\r\na\r\nb\"\"\"", ["s": "a\nb"]),
        (
            "line-ending backslash", "s = \"\"\"\nThe quick \\\n\n    brown \\   \n  fox\"\"\"",
            ["s": "The quick brown fox"]
        ),
        (
            "quotes inside multi-line basic", "s = \"\"\"Here are two quotation marks: \"\". Simple.\"\"\"",
            ["s": "Here are two quotation marks: \"\". Simple."]
        ),
        (
            "quotes at the end of multi-line basic", "s = \"\"\"\"This,\" she said.\"\"\"\"\"",
            ["s": "\"This,\" she said.\"\""]
        ),
        (
            "multi-line literal", "s = '''\nThe first newline is\ntrimmed in raw strings.\n   \\n stays'''",
            ["s": "The first newline is\ntrimmed in raw strings.\n   \\n stays"]
        ),
        (
            "multi-line literal quotes", "s = ''''That,' she said, 'is still pointless.''''",
            ["s": "'That,' she said, 'is still pointless.'"]
        ),
        (
            "integers", "a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = -0\nh = +0",
            ["a": 99, "b": 42, "c": 0, "d": -17, "e": 1000, "f": 5_349_221, "g": 0, "h": 0]
        ),
        (
            "integer limits", "a = 9223372036854775807\nb = -9223372036854775808",
            ["a": .integer(.max), "b": .integer(.min)]
        ),
        (
            "hex octal binary",
            "a = 0xDEADBEEF\nb = 0xdead_beef\nc = 0o01234567\nd = 0o755\ne = 0b11010110\nf = 0x7FFFFFFFFFFFFFFF",
            ["a": 0xDEAD_BEEF, "b": 0xDEAD_BEEF, "c": 0o1234567, "d": 0o755, "e": 0b1101_0110, "f": .integer(.max)]
        ),
        (
            "floats",
            "a = +1.0\nb = 3.1415\nc = -0.01\nd = 5e+22\ne = 1e06\nf = -2E-2\ng = 6.626e-34\nh = 224_617.445_991_228\ni = 1e1_0",
            [
                "a": 1.0, "b": 3.1415, "c": -0.01, "d": 5e22, "e": 1e6, "f": -2e-2, "g": 6.626e-34,
                "h": 224_617.445_991_228, "i": 1e10,
            ]
        ),
        (
            "infinities", "a = inf\nb = +inf\nc = -inf",
            ["a": .float(.infinity), "b": .float(.infinity), "c": .float(-.infinity)]
        ),
        ("booleans", "a = true\nb = false", ["a": true, "b": false]),
        (
            "offset date-times",
            "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00-07:00\nc = 1979-05-27T00:32:00.999999+07:00\nd = 1979-05-27 07:32:00z\ne = 1979-05-27t07:32:00Z",
            [
                "a": .datetime("1979-05-27T07:32:00Z"), "b": .datetime("1979-05-27T00:32:00-07:00"),
                "c": .datetime("1979-05-27T00:32:00.999999+07:00"), "d": .datetime("1979-05-27T07:32:00Z"),
                "e": .datetime("1979-05-27T07:32:00Z"),
            ]
        ),
        (
            "local date-time, date, time",
            "a = 1979-05-27T07:32:00\nb = 1979-05-27\nc = 07:32:00\nd = 00:32:00.999999\ne = 2000-02-29",
            [
                "a": .datetime("1979-05-27T07:32:00"), "b": .datetime("1979-05-27"), "c": .datetime("07:32:00"),
                "d": .datetime("00:32:00.999999"), "e": .datetime("2000-02-29"),
            ]
        ),
        (
            "arrays",
            "a = [ 1, 2, 3 ]\nb = [ \"red\", 'yellow' ]\nc = [ [ 1, 2 ], [3, 4, 5] ]\nd = [ 0.1, \"mixed\", true ]\ne = []",
            [
                "a": [1, 2, 3], "b": ["red", "yellow"], "c": [[1, 2], [3, 4, 5]], "d": [0.1, "mixed", true], "e": [],
            ]
        ),
        (
            "multi-line array with comments and trailing comma", "a = [\n  1, # one\n  # nothing\n  2,\n]\n",
            ["a": [1, 2]]
        ),
        (
            "inline tables",
            "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\nanimal = { type.name = \"pug\" }\ne = {}",
            [
                "name": ["first": "Tom", "last": "Preston-Werner"], "point": ["x": 1, "y": 2],
                "animal": ["type": ["name": "pug"]], "e": [:],
            ]
        ),
        ("array of inline tables", "points = [ { x = 1 },\n  { x = 2 } ]", ["points": [["x": 1], ["x": 2]]]),
        (
            "tables",
            "[table-1]\nkey1 = \"some string\"\n[table-2]\nkey1 = 456\n[dog.\"tater.man\"]\ntype.name = \"pug\"",
            [
                "table-1": ["key1": "some string"], "table-2": ["key1": 456],
                "dog": ["tater.man": ["type": ["name": "pug"]]],
            ]
        ),
        (
            "header whitespace and quoted parts", "[ a . b . \"c d\" ]\nx = 1\n[ j . \"ʞ\" . 'l' ]",
            ["a": ["b": ["c d": ["x": 1]]], "j": ["ʞ": ["l": [:]]]]
        ),
        ("implicit super-table defined later", "[x.y.z.w]\n[x]\na = 1", ["x": ["y": ["z": ["w": [:]]], "a": 1]]),
        (
            "header inside dotted-key table",
            "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
            ["fruit": ["apple": ["color": "red", "taste": ["sweet": true], "texture": ["smooth": true]]]]
        ),
        (
            "array of tables", "[[products]]\nname = \"Hammer\"\n[[products]]  # empty\n[[products]]\nname = \"Nail\"",
            ["products": [["name": "Hammer"], [:], ["name": "Nail"]]]
        ),
        (
            "nested arrays of tables",
            """
            [[fruits]]
            name = "apple"
            [fruits.physical]
            color = "red"
            [[fruits.varieties]]
            name = "red delicious"
            [[fruits.varieties]]
            name = "granny smith"
            [[fruits]]
            name = "banana"
            [[fruits.varieties]]
            name = "plantain"
            """,
            [
                "fruits": [
                    [
                        "name": "apple", "physical": ["color": "red"],
                        "varieties": [["name": "red delicious"], ["name": "granny smith"]],
                    ],
                    ["name": "banana", "varieties": [["name": "plantain"]]],
                ]
            ]
        ),
        ("tab in strings and comments", "a = \"x\ty\" # c\tc\nb = 'p\tq'", ["a": "x\ty", "b": "p\tq"]),
        ("keys that look like other things", "true = 1\ninf = 2\n3.14 = 3", ["true": 1, "inf": 2, "3": ["14": 3]]),
    ]

    func testValidDocuments() throws {
        for (name, document, expected) in Self.valid {
            do {
                let parsed = try TOMLParser.parse(document)
                XCTAssertEqual(parsed, expected, "\(name): got \(TOMLValue.table(parsed))")
            } catch {
                XCTFail("\(name): unexpected error \(error)")
            }
        }
    }

    func testNaN() throws {
        let parsed = try TOMLParser.parse("a = nan\nb = +nan\nc = -nan")
        for key in ["a", "b", "c"] {
            XCTAssertTrue(parsed[key]?.doubleValue?.isNaN ?? false, key)
        }
    }

    func testKeyOrderIsKept() throws {
        let parsed = try TOMLParser.parse("z = 1\na = 2\nm = 3")
        XCTAssertEqual(parsed.keys, ["z", "a", "m"])
    }

    // MARK: Invalid documents

    /// (document, line, column, fragment of the message)
    static let invalid: [(String, Int, Int, String)] = [
        ("a = 1\na = 2", 2, 1, "duplicate key a (first defined on line 1)"),
        ("a.b = 1\na.b = 2", 2, 3, "duplicate key a.b"),
        ("a = 1\na.b = 2", 2, 1, "cannot add keys to a with a dotted key"),
        ("[a]\nb = 1\n[a]", 3, 2, "table [a] is already defined by a header on line 1"),
        ("[a]\nb = 1\n\n[a.b]", 4, 4, "cannot define [a.b]: a.b is already an integer (line 2)"),
        ("[fruit]\napple.color = \"red\"\n[fruit.apple]", 3, 8, "already defined by dotted keys"),
        ("a = {}\n[a]", 2, 2, "already an inline table"),
        ("a = { b = 1 }\na.c = 2", 2, 1, "already defined as an inline table"),
        ("a = []\n[[a]]", 2, 3, "already an array"),
        ("[[a]]\n[a]", 2, 2, "is an array of tables"),
        ("[a]\n[[a]]", 2, 3, "is already a table"),
        ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1", 4, 3, "already defined as a table"),
        ("s = \"a\\qb\"", 1, 7, "invalid escape sequence \\q"),
        ("s = \"\\u12\"", 1, 6, "\\u must be followed by 4 hex digits"),
        ("s = \"\\uD800\"", 1, 6, "not a Unicode scalar value"),
        ("s = \"\\U00110000\"", 1, 6, "not a Unicode scalar value"),
        ("s = \"abc\ndef\"", 1, 9, "newline in a single-line string"),
        ("s = 'abc\ndef'", 1, 9, "newline in a single-line string"),
        ("s = \"abc", 1, 5, "unterminated string"),
        ("s = \"\"\"abc", 1, 5, "unterminated multi-line string"),
        ("s = \"\"\"a\"\"\"\"\"\"", 1, 9, "too many quotes"),
        ("s = \"a\u{01}b\"", 1, 7, "control character U+0001 must be escaped"),
        ("a = 1 # bad \u{7F}", 1, 13, "not allowed in a comment"),
        ("a = 9223372036854775808", 1, 5, "does not fit in 64 bits"),
        ("a = -9223372036854775809", 1, 5, "does not fit in 64 bits"),
        ("a = 0x1_0000_0000_0000_0000", 1, 5, "does not fit in 64 bits"),
        ("a = 99999999999999999999999", 1, 5, "does not fit in 64 bits"),
        ("a = 01", 1, 5, "leading zeros"),
        ("a = 1__000", 1, 5, "underscore"),
        ("a = _1", 1, 5, "unquoted text"),
        ("a = 1_", 1, 5, "underscore"),
        ("a = +0x1", 1, 5, "sign is not allowed"),
        ("a = 0xG", 1, 5, "invalid hexadecimal"),
        ("a = 0b102", 1, 5, "invalid binary"),
        ("a = 1.", 1, 5, "digit must follow the decimal point"),
        ("a = .5", 1, 5, "expected a value, found '.'"),
        ("a = 1e", 1, 5, "exponent needs digits"),
        ("a = 1.5.3", 1, 5, "invalid number"),
        ("a = 1e400", 1, 5, "out of range"),
        ("a = 1979-13-01", 1, 5, "month 13"),
        ("a = 1979-02-29", 1, 5, "day 29"),
        ("a = 1979-05-27T25:00:00", 1, 5, "out of range"),
        ("a = 07:32", 1, 5, "seconds are required"),
        ("a = 07:32:00Z", 1, 5, "local time cannot have an offset"),
        ("a = 1979-05-27T07:32:00+7", 1, 5, "offset must be Z"),
        ("a = 1979-05-27X", 1, 5, "invalid date-time"),
        ("key value", 1, 5, "expected '=' after the key key, found 'v'"),
        ("key", 1, 4, "expected '=' after the key key, found end of file"),
        ("= 1", 1, 1, "missing key before '='"),
        ("a =", 1, 4, "expected a value, found end of file"),
        ("a = \nb = 1", 1, 5, "expected a value, found end of line"),
        ("a = hello", 1, 5, "unquoted text hello; strings must be in quotes"),
        ("a = https://example.org", 1, 5, "unquoted text https://example.org"),
        ("a = True", 1, 5, "booleans are written true and false"),
        ("a = 1 b = 2", 1, 7, "expected the end of the line after a value, found 'b'"),
        ("a = [1 2]", 1, 8, "expected ',' or ']' in the array"),
        ("a = [1,,2]", 1, 8, "expected a value in the array"),
        ("a = [1, 2", 1, 5, "array is not closed"),
        ("a = { b = 1,\n c = 2 }", 1, 13, "inline table must be on one line"),
        ("a = { b = 1, }", 1, 14, "trailing comma is not allowed"),
        ("a = { b = 1 c = 2 }", 1, 13, "expected ',' or '}'"),
        ("a = { b = 1, b = 2 }", 1, 14, "duplicate key b"),
        ("[a", 1, 3, "expected ']' to close the table header"),
        ("[[a]", 1, 4, "expected ']]' to close the table header"),
        ("[a] b = 1", 1, 5, "expected the end of the line after a table header"),
        ("[]", 1, 2, "expected a key, found ']'"),
        ("[a.]", 1, 4, "expected a key"),
        ("\"\"\"key\"\"\" = 1", 1, 1, "a key cannot be a multi-line string"),
        ("a = 1\rb = 2", 1, 6, "carriage return"),
        (String(repeating: "a = [", count: 1) + String(repeating: "[", count: 200), 1, 105, "nested more than 100"),
        ("\n\n  x.y = 1\n  [x]", 4, 4, "already defined by dotted keys on line 3"),
    ]

    func testInvalidDocuments() {
        for (document, line, column, fragment) in Self.invalid {
            do {
                let parsed = try TOMLParser.parse(document, fileName: "t.toml")
                XCTFail("\(document.debugDescription): expected an error, got \(TOMLValue.table(parsed))")
            } catch {
                XCTAssertEqual(error.file, "t.toml")
                XCTAssertEqual(error.line, line, "line for \(document.debugDescription): \(error)")
                XCTAssertEqual(error.column, column, "column for \(document.debugDescription): \(error)")
                XCTAssertTrue(
                    error.message.contains(fragment),
                    "message for \(document.debugDescription): \(error.message) lacks \(fragment)")
            }
        }
    }

    func testErrorsDoNotQuoteValuesOfSecretLookingKeys() {
        let documents = [
            "password = hunter2secret", "token = 12345abcdef", "x = { api_key = 99999999999999999999 }",
            "secret = \"abc\\qdef\"", "secret_env = \"\\uD800\"", "[a]\nb.token = 2024-13-45",
        ]
        for document in documents {
            XCTAssertThrowsError(try TOMLParser.parse(document)) { error in
                let message = (error as? ConfigError)?.message ?? ""
                XCTAssertTrue(message.contains("(value hidden)"), message)
                for secret in ["hunter2", "12345", "99999", "\\q", "D800", "2024"] {
                    XCTAssertFalse(message.contains(secret), message)
                }
            }
        }
        XCTAssertThrowsError(try TOMLParser.parse("url = https://x")) { error in
            XCTAssertTrue("\(error)".contains("https://x"))
        }
    }

    /// Mutated documents must produce a value or a located error, never a crash or a hang.
    func testMutatedDocumentsNeverCrash() {
        let seed =
            Array(ConfigTests.sample.unicodeScalars)
            + Array("\na = [1, {b = 2}, 'x', \"\"\"y\"\"\"]\nt = 1979-05-27T07:32:00Z\n[[z]]\n".unicodeScalars)
        let alphabet = Array("[]{}=.,\"'#\\\n\r \t0x_+-:eTZabu".unicodeScalars)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<1000 {
            var scalars = seed
            for _ in 0..<(1 + next(4)) {
                let at = next(scalars.count)
                switch next(3) {
                case 0: scalars.remove(at: at)
                case 1: scalars.insert(alphabet[next(alphabet.count)], at: at)
                default: scalars[at] = alphabet[next(alphabet.count)]
                }
            }
            let text = String(String.UnicodeScalarView(scalars))
            _ = try? HostConfig(text: text)
            do {
                _ = try TOMLParser.parse(text)
            } catch {
                XCTAssertNotNil(error.line)
                XCTAssertNotNil(error.column)
            }
        }
    }

    // MARK: Positions

    func testKeysRememberTheirLines() throws {
        let document = """
            # comment
            title = "x"

            [limits]
            memory =   "64MB"
            [nightscout.home]
            url = "https://ns.example.org"
            [[jobs]]
            name = "a"
            [[jobs]]
            name = "b"
            inline = { deep.er = 1 }
            """
        let root = try TOMLParser.parse(document)
        XCTAssertEqual(root.line(of: "title"), 2)
        let memory = try XCTUnwrap(root.entry(atPath: ["limits", "memory"]))
        XCTAssertEqual(memory.line, 5)
        XCTAssertEqual(memory.column, 1)
        XCTAssertEqual(memory.valueLine, 5)
        XCTAssertEqual(memory.valueColumn, 12)
        XCTAssertEqual(root.line(of: "limits"), 4)
        XCTAssertEqual(root.entry(atPath: ["nightscout", "home"])?.line, 6)
        XCTAssertEqual(root.entry(atPath: ["nightscout", "home"])?.column, 13)
        XCTAssertEqual(root.entry(atPath: ["nightscout"])?.line, 6)
        XCTAssertEqual(root.entry(atPath: ["nightscout", "home", "url"])?.line, 7)
        XCTAssertEqual(root.line(of: "jobs"), 8)
        let jobs = try XCTUnwrap(root["jobs"]?.arrayValue)
        XCTAssertEqual(jobs[1].tableValue?.line(of: "name"), 11)
        let inline = try XCTUnwrap(jobs[1].tableValue?.entry("inline")?.value.tableValue)
        XCTAssertEqual(inline.entry("deep")?.line, 12)
        XCTAssertEqual(inline.entry("deep")?.column, 12)
    }

    func testImplicitTableTakesTheLineOfItsOwnHeader() throws {
        let root = try TOMLParser.parse("[a.b]\n\n[a]\nx = 1")
        XCTAssertEqual(root.line(of: "a"), 3)
    }

    func testColumnsCountScalarsNotBytes() {
        XCTAssertThrowsError(try TOMLParser.parse("\"é\" = \"\\x\"")) { error in
            XCTAssertEqual((error as? ConfigError)?.column, 8)
        }
    }

    // MARK: Key paths and rendering

    func testParseKeyPath() {
        XCTAssertEqual(TOMLParser.parseKeyPath("nightscout.home.url"), ["nightscout", "home", "url"])
        XCTAssertEqual(TOMLParser.parseKeyPath("scripts.\"alerts.lua\".trusted"), ["scripts", "alerts.lua", "trusted"])
        XCTAssertEqual(TOMLParser.parseKeyPath(" a . 'b c' "), ["a", "b c"])
        XCTAssertEqual(TOMLParser.parseKeyPath(""), [])
        XCTAssertNil(TOMLParser.parseKeyPath("a..b"))
        XCTAssertNil(TOMLParser.parseKeyPath("a b"))
        XCTAssertNil(TOMLParser.parseKeyPath("a."))
    }

    func testDescriptionRoundTrips() throws {
        let value: TOMLValue = [
            "s": "a\"b\\c\n\u{01}", "n": 1, "f": 1.5, "b": true, "arr": [1, "x"], "t": ["k k": [:]],
        ]
        let text = "v = \(value)"
        XCTAssertEqual(try TOMLParser.parse(text)["v"], value)
        XCTAssertEqual(ConfigWording.keyPath(["scripts", "alerts.lua", "trusted"]), "scripts.\"alerts.lua\".trusted")
    }

    func testTableEditing() {
        var table: TOMLTable = ["a": 1, "b": 2]
        table["a"] = 3
        table["c"] = 4
        XCTAssertEqual(table.keys, ["a", "b", "c"])
        XCTAssertEqual(table.removeValue(forKey: "b"), 2)
        XCTAssertEqual(table.keys, ["a", "c"])
        table["a"] = nil
        XCTAssertEqual(table, ["c": 4])
        XCTAssertEqual(table.value(atPath: []), .table(table))
        XCTAssertNil(table.entry(atPath: []))
    }
}
