/// The message inside `bad argument #1 to '…connect' (…)` for a script that names a variable or
/// a file (`key`) instead of a literal credential; `profileCall` is how a profile is opened.
func credentialReferenceRefusal(_ key: String, literal: String, profileCall: String = "nightscout.client") -> String {
    "opts.\(key): a script cannot name an environment variable or a file to read a credential from; pass the "
        + "credential itself (\(literal) = \"…\") or use a profile from the config (\(profileCall) \"NAME\", with \(key) in its table)"
}
