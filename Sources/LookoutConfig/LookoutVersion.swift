/// Lookout's version: the CLI's `--version`, the app version in Northlight device info.
public enum LookoutVersion {
    /// The version string (semantic versioning).
    public static let current = "0.1.0"
}
