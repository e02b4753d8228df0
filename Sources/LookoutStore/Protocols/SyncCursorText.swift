import Foundation
import NightscoutKit

/// How both backends keep a `HistoryCursor`: JSON text with sorted keys.
enum SyncCursorText {
    /// The text to store, or nil for no cursor.
    static func encode(_ cursor: HistoryCursor?) throws -> String? {
        try cursor.map { cursor in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return String(decoding: try encoder.encode(cursor), as: UTF8.self)
        }
    }

    /// The stored cursor, or nil when there is none; an error naming the database, site and
    /// collection when the text is not readable.
    static func decode(_ text: String?, site: String, collection: V3Collection, database: String) throws(StateStoreError)
        -> HistoryCursor?
    {
        guard let text else { return nil }
        do {
            return try JSONDecoder().decode(HistoryCursor.self, from: Data(text.utf8))
        } catch {
            throw StateStoreError(file: database,
                                  message: "the stored sync cursor of \(collection.rawValue) for \(site) is not readable: \(error)")
        }
    }
}
