#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a section of this process's own executable lies in memory, read from the ELF file's
/// section headers (a stripped binary keeps them) and the load address the kernel chose.
enum ExecutableSection {
    /// The address range of section `name` (such as `.rodata`) in this process, or nil when the
    /// executable is not a 64-bit little-endian ELF file or has no such section.
    static func range(named name: String, executable: String = "/proc/self/exe") -> Range<Int>? {
        guard let file = FileHandle(forReadingAtPath: executable) else { return nil }
        defer { try? file.close() }
        func read(_ offset: Int, _ count: Int) -> [UInt8]? {
            guard offset >= 0, (0..<(1 << 24)).contains(count),  // headers and names only
                  (try? file.seek(toOffset: UInt64(offset))) != nil,
                  let data = try? file.read(upToCount: count), data.count == count else { return nil }
            return [UInt8](data)
        }
        func integer(_ bytes: [UInt8], _ at: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
        }
        // ELF header: 64-bit (class 2), little-endian (data 1).
        guard let header = read(0, 64), header[0..<4] == [0x7f, 0x45, 0x4c, 0x46], header[4] == 2, header[5] == 1
        else { return nil }
        let programHeaders = integer(header, 0x20, 8), programHeaderSize = integer(header, 0x36, 2)
        let programHeaderCount = integer(header, 0x38, 2)
        let sectionHeaders = integer(header, 0x28, 8), sectionHeaderSize = integer(header, 0x3a, 2)
        let sectionCount = integer(header, 0x3c, 2), namesIndex = integer(header, 0x3e, 2)
        guard sectionHeaderSize >= 0x40, namesIndex < sectionCount, programHeaderSize >= 0x38,
              let table = read(sectionHeaders, sectionHeaderSize * sectionCount),
              let phdrs = read(programHeaders, programHeaderSize * programHeaderCount)
        else { return nil }
        // The load bias: where the kernel put the program headers (AT_PHDR) minus their address
        // in the file's layout (PT_PHDR's p_vaddr).
        var bias: Int?
        if let loaded = programHeadersAddress() {
            for i in 0..<programHeaderCount where integer(phdrs, i * programHeaderSize, 4) == 6 /* PT_PHDR */ {
                bias = loaded - integer(phdrs, i * programHeaderSize + 0x10, 8)
            }
        }
        let namesHeader = namesIndex * sectionHeaderSize
        guard let bias, let names = read(integer(table, namesHeader + 0x18, 8), integer(table, namesHeader + 0x20, 8))
        else { return nil }
        let wanted = Array(name.utf8) + [0]
        for i in 0..<sectionCount {
            let at = i * sectionHeaderSize
            let nameOffset = integer(table, at, 4)
            guard nameOffset + wanted.count <= names.count,
                  Array(names[nameOffset..<nameOffset + wanted.count]) == wanted else { continue }
            let address = integer(table, at + 0x10, 8), size = integer(table, at + 0x20, 8)
            guard address > 0, size >= 0, address < 1 << 47, size < 1 << 40 else { return nil }  // not loaded
            return (bias + address)..<(bias + address + size)
        }
        return nil
    }

    /// AT_PHDR from this process's auxiliary vector (`/proc/self/auxv`: pairs of 64-bit
    /// key and value).
    private static func programHeadersAddress() -> Int? {
        guard let data = FileManager.default.contents(atPath: "/proc/self/auxv") else { return nil }
        let words = data.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
        for pair in stride(from: 0, to: words.count - 1, by: 2) where words[pair] == 3 /* AT_PHDR */ {
            return Int(words[pair + 1])
        }
        return nil
    }
}
