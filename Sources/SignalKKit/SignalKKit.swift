/// SignalKKit: a Signal K client (discovery, delta stream, value store, REST). Knows nothing of Lua.
///
/// The data core: ``SKJSON`` / ``JSONValue`` (JSON), ``SKServerMessage`` / ``SKDelta`` / ``SKHello``
/// (wire messages), ``SKDataModel`` / ``SignalKStore`` (value store), ``SKPattern`` (wildcards),
/// ``SKSubscribeMessage`` / ``SKUnsubscribeAllMessage`` (subscriptions) and ``SKUnits``.
import LookoutWire

public enum SignalKKit {
    /// The library's version.
    public static let version = "0.1.0"
}
