extension LuaCall {
    /// ``wait(_:event:_:deliver:)`` for a request to a server (HTTP, Nightscout, Signal K…): it
    /// runs under the state's ``LuaRequestGate``, so at most ``LuaOptions/requestsInFlight`` of
    /// the script's requests run at once. Beyond that the task waits for a slot (its timeout
    /// starts when the request does); when eight times as many already wait, the call returns
    /// `nil, err` with `err.code == "limit"` at once, naming the limit.
    public func request<T: Sendable>(
        _ what: String,
        _ operation: @escaping @Sendable () async throws -> T,
        deliver: @escaping (LuaStack, T) -> Int32
    ) throws(LuaRaise) -> LuaReturn {
        if let refusal = engine.requestAdmission(what) { return failure(refusal) }
        return try waitForHost(what, event: false, counted: true, operation, deliver: deliver)
    }
}
