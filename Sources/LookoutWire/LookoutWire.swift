// LookoutWire: what every service client and the simulators share on the wire, knowing no Lua
// and no service.
//
// - JSON: ``JSONValue`` (one value type), ``JSONParser`` (one strict byte parser, also a cursor
//   for single-pass decoders), ``JSONWriter`` (one writer; string escaping in one place).
// - Dates: ``ISO8601`` (one ISO-8601 / RFC 3339 reader and writer, with per-service ``ISO8601/Rules``),
//   ``HTTPDate`` (RFC 1123 dates, `Retry-After`), ``CivilCalendar``.
// - HTTP: ``WireHTTPClient`` (AsyncHTTPClient with connect and request timeouts, ``RedirectPolicy``
//   origin pinning, ``Redaction`` of secrets in ``WireHTTPError``), ``RetryPolicy``.

/// The version of the wire module's contracts (bumped when a public behaviour changes).
public enum LookoutWire {
    /// `1`: the first shared wire module (issue 15).
    public static let version = 1
}
