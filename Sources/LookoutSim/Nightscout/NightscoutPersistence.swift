import Foundation
import GRDB
import LookoutWire

/// SQLite write-through persistence for the store (`Persistence.sqlite`): one row per document,
/// keyed by collection and `_id`, in insertion order.
struct NSSQLitePersistence: Sendable {
    let db: DatabaseQueue

    init(path: String) throws {
        db = try DatabaseQueue(path: path)
        try db.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS docs (
                        collection TEXT NOT NULL, oid TEXT NOT NULL, seq INTEGER NOT NULL, json TEXT NOT NULL,
                        PRIMARY KEY (collection, oid))
                    """)
        }
    }

    /// All stored documents and the next free sequence number.
    func load() throws -> (NSStoreData, Int64) {
        var data = NSStoreData()
        var maxSeq: Int64 = 0
        let rows = try db.read { db in try Row.fetchAll(db, sql: "SELECT collection, oid, seq, json FROM docs ORDER BY seq") }
        for row in rows {
            let col: String = row["collection"]
            let oid: String = row["oid"]
            let seq: Int64 = row["seq"]
            let json: String = row["json"]
            maxSeq = max(maxSeq, seq)
            guard let fields = (try? JSONValue.parse(json))?.objectValue else { continue }
            data.insert(col, NSDoc(oid: oid, fields: fields))
        }
        return (data, maxSeq + 1)
    }

    /// Writes the differences between `before` and `after`; returns the next sequence number.
    func persist(before: NSStoreData, after: NSStoreData, nextSeq: Int64) throws -> Int64 {
        var seq = nextSeq
        var upserts: [(String, NSDoc, Int64?)] = []
        var deletes: [(String, String)] = []
        for c in Set(before.collections.keys).union(after.collections.keys) {
            let b = before.docs(c), a = after.docs(c)
            if b == a { continue }
            let old = Dictionary(b.map { ($0.oid, $0) }, uniquingKeysWith: { x, _ in x })
            let new = Set(a.map(\.oid))
            for d in a where old[d.oid] != d {
                if old[d.oid] == nil {
                    upserts.append((c, d, seq))
                    seq += 1
                } else {
                    upserts.append((c, d, nil))
                }
            }
            for d in b where !new.contains(d.oid) { deletes.append((c, d.oid)) }
        }
        if upserts.isEmpty && deletes.isEmpty { return seq }
        try db.write { db in
            for (c, oid) in deletes {
                try db.execute(sql: "DELETE FROM docs WHERE collection = ? AND oid = ?", arguments: [c, oid])
            }
            for (c, d, s) in upserts {
                let json = JSONValue.object(d.fields).jsonString
                if let s {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO docs (collection, oid, seq, json) VALUES (?, ?, ?, ?)",
                        arguments: [c, d.oid, s, json])
                } else {
                    try db.execute(
                        sql: "UPDATE docs SET json = ? WHERE collection = ? AND oid = ?", arguments: [json, c, d.oid])
                }
            }
        }
        return seq
    }
}
