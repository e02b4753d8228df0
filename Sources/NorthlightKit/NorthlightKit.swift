/// NorthlightKit: a client of the Northlight feedback API (seed 003): feedback, bug reports,
/// votes, the public board and roadmap, with device information collected on the host.
/// It knows nothing of Lua; `LookoutModules` builds the `feedback` module on it.
///
/// Start with ``NorthlightClient/configure(apiKey:baseURL:appVersion:)``.
public enum NorthlightKit {}
