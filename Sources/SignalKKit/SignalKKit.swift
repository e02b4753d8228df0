/// SignalKKit: a Signal K client (discovery, delta stream, value store, REST). Knows nothing of Lua.
///
/// The data core: ``SKJSON`` / ``SKValue`` (JSON), ``SKServerMessage`` / ``SKDelta`` / ``SKHello``
/// (wire messages), ``SKDataModel`` / ``SignalKStore`` (value store), ``SKPattern`` (wildcards),
/// ``SKSubscribeMessage`` / ``SKUnsubscribeAllMessage`` (subscriptions) and ``SKUnits``.
public enum SignalKKit {
    /// The library's version.
    public static let version = "0.1.0"
}
