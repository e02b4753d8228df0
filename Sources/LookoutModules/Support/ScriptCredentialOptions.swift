import LookoutConfig
import Lua

/// Credentials in the options of an ad-hoc client (`nightscout.connect{…}`, `signalk.connect{…}`).
///
/// A script may pass a credential it already holds as a literal (`token = "…"`), never the name of
/// an environment variable or a file (`token_env`, `secret_file`, …): those belong to config
/// profiles, chosen by the owner of the machine. Otherwise any script could send any secret of the
/// host to an address of its choice. The refusal names only the option, so it tells nothing about
/// which variables or files exist.
enum ScriptCredentialOptions {
    /// Raises `bad argument` for the first option (by name) that names a variable or a file.
    /// - Parameters:
    ///   - literals: the credential options the constructor takes as literals (`token`, `jwt`, …).
    ///   - profileCall: how the script opens a profile instead (`nightscout.client`).
    static func refuseReferences(_ opts: [String: LuaValue], call: LuaCall, n: Int, literals: [String],
                                 profileCall: String) throws(LuaRaise) {
        guard let key = opts.keys.sorted().first(where: { HostConfigSecrets.referenceKind($0) != nil }) else { return }
        let base: String
        switch HostConfigSecrets.referenceKind(key) {
        case .environment(let name)?, .file(let name)?: base = name
        case nil: base = key
        }
        let literal = literals.contains(base) ? base : (literals.first ?? "token")
        throw call.argumentError(n, "opts.\(key): a script cannot name an environment variable or a file to read a "
            + "credential from; pass the credential itself (\(literal) = \"…\") or use a profile from the config "
            + "(\(profileCall) \"NAME\", with \(key) in its table)")
    }

    /// The literal credential `opts[name]`, if given: a non-empty string a header can carry.
    /// Messages never repeat the value.
    static func literal(_ opts: [String: LuaValue], _ name: String, call: LuaCall, n: Int) throws(LuaRaise) -> String? {
        guard let value = opts[name] else { return nil }
        guard let text = value.text, !text.isEmpty,
              !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw call.argumentError(n, "opts.\(name): expected the credential as a non-empty string without control characters")
        }
        return text
    }
}
