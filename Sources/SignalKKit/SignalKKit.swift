import LookoutWire

/// SignalKKit: a Signal K client (discovery, delta stream, value store, REST). Knows nothing of Lua.
///
/// The data core: ``SignalKJSON`` / ``JSONValue`` (JSON), ``SignalKServerMessage`` / ``SignalKDelta`` / ``SignalKHello``
/// (wire messages), ``SignalKDataModel`` / ``SignalKStore`` (value store), ``SignalKPattern`` (wildcards),
/// ``SignalKSubscribeMessage`` / ``SignalKUnsubscribeAllMessage`` (subscriptions) and ``SignalKUnits``.
public enum SignalKKit {
    /// The library's version.
    public static let version = "0.1.0"
}
