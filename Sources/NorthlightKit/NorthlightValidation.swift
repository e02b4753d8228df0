import Foundation

/// The checks made before anything is sent; each failure is `invalidInput` naming the field.
public enum NorthlightValidation {
    /// The longest title the API accepts.
    public static let maximumTitleLength = 255

    /// A title: required (not blank) and at most 255 characters.
    public static func title(_ title: String) throws(NorthlightError) -> String {
        guard !title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw .invalidInput("title: required") }
        guard title.count <= maximumTitleLength else {
            throw .invalidInput("title: at most \(maximumTitleLength) characters (got \(title.count))")
        }
        return title
    }

    /// A description: required (not blank).
    public static func description(_ description: String) throws(NorthlightError) -> String {
        guard !description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .invalidInput("description: required")
        }
        return description
    }

    /// An e-mail address: `local@domain.tld`, no spaces, at most 254 characters.
    public static func email(_ email: String) throws(NorthlightError) -> String {
        guard isEmail(email) else { throw .invalidInput("email: not a valid address") }
        return email
    }

    /// A user identifier for votes: not blank, at most 255 characters.
    public static func userIdentifier(_ identifier: String) throws(NorthlightError) -> String {
        guard !identifier.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, identifier.count <= 255 else {
            throw .invalidInput("user_identifier: required (1 to 255 characters)")
        }
        return identifier
    }

    /// A feedback id: not blank and safe in a path segment.
    public static func feedbackID(_ id: String) throws(NorthlightError) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_"))
        guard !id.isEmpty, id.count <= 128, id.unicodeScalars.allSatisfy(allowed.contains) else {
            throw .invalidInput("feedback_id: expected letters, digits, '-' or '_'")
        }
        return id
    }

    /// Whether `text` looks like an e-mail address.
    public static func isEmail(_ text: String) -> Bool {
        guard text.count <= 254, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }) else { return false }
        return labels.last!.count >= 2
    }
}
