/// The lease a script runs under when several `serve --cluster` instances share the work: the
/// state checks it when each request or other host call starts (``LuaCall/request(_:_:deliver:)``,
/// every wait for host work), so a script whose lease has moved on (its instance was paused or
/// cut off from the database past the lease) does nothing more outside; the call returns
/// `nil, err` with `err.code == "lease"`.
public protocol LuaLease: Sendable {
    /// Nil while the lease is held; otherwise why the script may no longer act.
    func refusal() -> String?
}
