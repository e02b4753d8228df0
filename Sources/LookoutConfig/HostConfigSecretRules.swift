/// Rules about secret keys in profiles.
public enum HostConfigSecrets {
    /// What a key refers to: a secret by environment variable, by file, or neither.
    public enum Reference: Equatable, Sendable {
        /// `<name>_env`, with `name`.
        case environment(String)
        /// `<name>_file`, with `name`.
        case file(String)
    }

    /// Whether `key` is `<name>_env` or `<name>_file` (case-insensitive suffix).
    public static func referenceKind(_ key: String) -> Reference? {
        let lowered = key.lowercased()
        if lowered.hasSuffix("_env") { return .environment(String(key.dropLast(4))) }
        if lowered.hasSuffix("_file") { return .file(String(key.dropLast(5))) }
        return nil
    }

    /// Words that mark a key as holding a secret.
    static let secretWords = ["secret", "token", "password", "api_key", "apikey", "otp_url"]

    /// Whether a key names a secret: its lower-cased name is or ends in `secret`, `token`,
    /// `password`, `api_key`, `apikey` or `otp_url` (Loop's OTP URL holds its key); or it is `key` or ends in `_key`, `-key` or a
    /// camel-case `Key` (plain `…key` would also catch words like `hotkey`).
    static func isSecretName(_ key: String) -> Bool {
        let lowered = key.lowercased()
        if secretWords.contains(where: { lowered.hasSuffix($0) }) { return true }
        if lowered == "key" || lowered.hasSuffix("_key") || lowered.hasSuffix("-key") { return true }
        return key.count > 3 && key.hasSuffix("Key")
    }

    /// Whether `name` looks like an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !TOMLCharacters.isDigit(first) else { return false }
        return name.unicodeScalars.allSatisfy { TOMLCharacters.isBareKey($0) && $0 != "-" }
    }
}
