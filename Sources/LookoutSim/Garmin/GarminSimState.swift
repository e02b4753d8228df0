import Foundation
import LookoutWire

/// The simulator's mutable state: SSO sessions, tickets, tokens, faults, counters, activity edits.
actor GarminSimState {
    struct Fault: Sendable {
        var status: Int
        var pathPrefix: String
        var remaining: Int
        var retryAfter: Int?
    }
    /// One SSO cookie session.
    struct Session: Sendable {
        var csrf: String?
        /// Email waiting for its MFA code.
        var pendingMFA: String?
    }
    /// An issued OAuth1 token.
    struct OAuth1Record: Sendable {
        var secret: String
        var email: String
        var mfaToken: String?
        /// A mobile-flow token whose first (login) exchange has not happened: `audience` required.
        var awaitingLoginExchange: Bool
        var mobile: Bool
    }

    let options: GarminSimulator.Options
    var counters = GarminSimulator.Counters()
    private var faults: [Fault] = []
    private var sessions: [String: Session] = [:]
    /// ticket → (email, mobile flow)
    private var tickets: [String: (String, Bool)] = [:]
    private var oauth1: [String: OAuth1Record] = [:]
    /// access token → (email, expires at unix seconds)
    private var access: [String: (String, Double)] = [:]
    private var secrets: [String] = []
    /// Deleted activity ids and renamed activities.
    var deletedActivities: Set<Int64> = []
    var activityEdits: [Int64: [String: JSONValue]] = [:]

    init(options: GarminSimulator.Options) { self.options = options }

    // MARK: faults
    func addFault(_ f: Fault) { faults.append(f) }
    func takeFault(path: String) -> Fault? {
        guard let i = faults.firstIndex(where: { path.hasPrefix($0.pathPrefix) && $0.remaining > 0 }) else { return nil }
        faults[i].remaining -= 1
        let f = faults[i]
        if f.remaining == 0 { faults.remove(at: i) }
        counters.injectedFaults += 1
        return f
    }

    // MARK: sessions
    func newSession() -> String {
        let id = Self.random(24)
        sessions[id] = Session()
        return id
    }
    func session(_ id: String?) -> Session? { id.flatMap { sessions[$0] } }
    func update(_ id: String, _ f: (inout Session) -> Void) {
        guard var s = sessions[id] else { return }
        f(&s)
        sessions[id] = s
    }
    func countLogin() { counters.logins += 1 }
    func countMFA() { counters.mfaVerifications += 1 }
    func countAPI() { counters.apiRequests += 1 }

    // MARK: tickets and tokens
    func issueTicket(email: String, mobile: Bool) -> String {
        let t = "ST-\(Int.random(in: 100_000...999_999))-\(Self.random(20))-\(mobile ? "sso" : "cas")"
        tickets[t] = (email, mobile)
        secrets.append(t)
        return t
    }
    /// Consumes a ticket (one use).
    func redeem(_ ticket: String) -> (String, Bool)? { tickets.removeValue(forKey: ticket) }

    func issueOAuth1(email: String, mobile: Bool) -> (String, OAuth1Record) {
        let token = Self.random(40)
        let mfa = options.mfaUsers.contains(email) ? "MFA-\(Int.random(in: 1000...9999))-\(Self.random(24))+/=-cas" : nil
        let rec = OAuth1Record(secret: Self.random(40), email: email, mfaToken: mfa, awaitingLoginExchange: mobile, mobile: mobile)
        oauth1[token] = rec
        secrets += [token, rec.secret] + (mfa.map { [$0] } ?? [])
        counters.preauthorizations += 1
        return (token, rec)
    }
    func oauth1Record(_ token: String) -> OAuth1Record? { oauth1[token] }
    func markExchanged(_ token: String) { oauth1[token]?.awaitingLoginExchange = false }
    func revokeOAuth1() { oauth1.removeAll() }

    func issueAccess(email: String, now: Date) -> (access: String, refresh: String, jti: String) {
        let a = Self.random(48), r = Self.random(48), j = UUID().uuidString.lowercased()
        access[a] = (email, now.timeIntervalSince1970 + Double(options.accessTokenLifetime))
        secrets += [a, r]
        counters.exchanges += 1
        return (a, r, j)
    }
    /// The account of a valid (unexpired) access token.
    func account(access token: String, now: Date) -> String? {
        guard let entry = access[token], entry.1 >= now.timeIntervalSince1970 else { return nil }
        return entry.0
    }
    func issuedSecrets() -> [String] { secrets }

    static func random(_ n: Int) -> String {
        let chars = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<n).map { _ in chars.randomElement()! })
    }
}
