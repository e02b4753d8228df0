import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pseudo-terminal pair: the test holds the master; a child opens the slave as its terminal.
final class PseudoTerminal {
    let master: Int32
    let slavePath: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Opens a pty with a window of `columns` × `rows` (wide, so lines do not wrap in the tests).
    init(columns: UInt16 = 200, rows: UInt16 = 50) throws {
        let calls = try PTYCalls.load()
        let fd = calls.openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "posix_openpt: \(String(cString: strerror(errno)))") }
        var name = [CChar](repeating: 0, count: 256)
        guard calls.grantpt(fd) == 0, calls.unlockpt(fd) == 0, calls.ptsname_r(fd, &name, name.count) == 0 else {
            let message = String(cString: strerror(errno))
            closeDescriptor(fd)
            throw Failure(description: "grantpt/unlockpt/ptsname: \(message)")
        }
        master = fd
        slavePath = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(fd, UInt(TIOCSWINSZ), &size)
        // The reader thread polls; reads must never block.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    private var closed = false

    /// Closes the master (the child sees a hang-up).
    func close() {
        guard !closed else { return }
        closed = true
        closeDescriptor(master)
    }

    deinit { close() }
}

/// posix_openpt, grantpt, unlockpt and ptsname_r: Swift's Glibc module does not import these XSI/GNU
/// declarations, so they are looked up in the C library at run time.
private struct PTYCalls {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias FDCall = @convention(c) (Int32) -> Int32
    typealias PTSName = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    let openpt: OpenPT
    let grantpt: FDCall
    let unlockpt: FDCall
    let ptsname_r: PTSName

    static func load() throws -> PTYCalls {
        func symbol<T>(_ name: String, as type: T.Type) throws -> T {
            guard let pointer = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                throw PseudoTerminal.Failure(description: "\(name) is not in the C library")
            }
            return unsafeBitCast(pointer, to: type)
        }
        return PTYCalls(
            openpt: try symbol("posix_openpt", as: OpenPT.self), grantpt: try symbol("grantpt", as: FDCall.self),
            unlockpt: try symbol("unlockpt", as: FDCall.self), ptsname_r: try symbol("ptsname_r", as: PTSName.self))
    }
}

/// Making terminal output readable for assertions.
enum TerminalText {
    /// The text without escape sequences and bells, with CR LF as LF (lone CRs kept).
    static func stripped(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var scalars = Array(text.unicodeScalars)[...]
        while let c = scalars.popFirst() {
            switch c {
            case "\u{1B}":
                skipEscape(&scalars)
            case "\u{07}":
                continue
            case "\r" where scalars.first == "\n":
                continue
            default:
                out.append(c)
            }
        }
        return String(out)
    }

    /// Lines as a terminal would show them: escape sequences for cursor movement and erasing are
    /// applied (CR, BS, CSI C/D/A/B/G/K/J), so a redrawn line reads as what the user sees.
    static func screen(_ text: String) -> [String] {
        var lines: [[Character]] = [[]]
        var row = 0, col = 0
        func put(_ ch: Character) {
            while lines.count <= row { lines.append([]) }
            while lines[row].count < col { lines[row].append(" ") }
            if col < lines[row].count { lines[row][col] = ch } else { lines[row].append(ch) }
            col += 1
        }
        var scalars = Array(text.unicodeScalars)[...]
        while let c = scalars.popFirst() {
            switch c {
            case "\r": col = 0
            case "\n":
                row += 1
                col = 0
                while lines.count <= row { lines.append([]) }
            case "\u{08}": col = max(0, col - 1)
            case "\t": col = (col / 8 + 1) * 8
            case "\u{07}": continue
            case "\u{1B}":
                guard scalars.first == "[" else {
                    skipEscape(&scalars)
                    continue
                }
                scalars.removeFirst()
                var parameters = ""
                var final: Unicode.Scalar = "m"
                while let p = scalars.popFirst() {
                    if p.value >= 0x40 && p.value <= 0x7E {
                        final = p
                        break
                    }
                    parameters.unicodeScalars.append(p)
                }
                let numbers = parameters.split(separator: ";").map { Int($0.filter(\.isNumber)) ?? 0 }
                let n = max(1, numbers.first ?? 1)
                while lines.count <= row { lines.append([]) }
                switch final {
                case "C": col += n
                case "D": col = max(0, col - n)
                case "A": row = max(0, row - n)
                case "B": row += n
                case "G": col = n - 1
                case "K":
                    switch numbers.first ?? 0 {
                    case 1: for i in 0..<min(col, lines[row].count) { lines[row][i] = " " }
                    case 2: lines[row] = []
                    default: if col < lines[row].count { lines[row].removeSubrange(col...) }
                    }
                case "J":
                    if col < lines[row].count { lines[row].removeSubrange(col...) }
                    if row + 1 < lines.count { lines.removeSubrange((row + 1)...) }
                case "P":  // delete characters
                    if col < lines[row].count { lines[row].removeSubrange(col..<min(lines[row].count, col + n)) }
                case "@":  // insert blanks
                    if col <= lines[row].count { lines[row].insert(contentsOf: repeatElement(" ", count: n), at: col) }
                default: break
                }
            default:
                if c.value >= 0x20 { put(Character(c)) }
            }
        }
        return lines.map { String($0).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
    }

    /// Skips the rest of an escape sequence that started with ESC.
    private static func skipEscape(_ scalars: inout ArraySlice<Unicode.Scalar>) {
        guard let kind = scalars.popFirst() else { return }
        switch kind {
        case "[":  // CSI: parameters and intermediates up to a final byte
            while let p = scalars.popFirst(), !(p.value >= 0x40 && p.value <= 0x7E) {}
        case "]", "P", "_", "^":  // OSC/DCS/APC/PM: up to BEL or ST
            while let p = scalars.popFirst() {
                if p == "\u{07}" { break }
                if p == "\u{1B}", scalars.first == "\\" {
                    scalars.removeFirst()
                    break
                }
            }
        case "(", ")", "*", "+", "#", "%":  // charset designation: one more byte
            _ = scalars.popFirst()
        default:  // two-byte sequences such as ESC = or ESC >
            break
        }
    }
}

private func closeDescriptor(_ fd: Int32) { _ = close(fd) }
