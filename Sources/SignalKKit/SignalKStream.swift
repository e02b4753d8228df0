import Foundation
import HTTPTypes
import Logging
import WSClient
import LookoutWire

/// The `subscribe` query parameter of the stream URL (contract §3.1).
public enum SignalKSubscribeMode: String, Sendable, Hashable {
    /// No implicit stream: data arrives only for explicit subscriptions (the contract's default).
    case none
    /// The implicit stream carries own-vessel deltas (signalk-server's default when absent).
    case ownVessel = "self"
    /// The implicit stream carries every context.
    case all
}

/// How a ``SignalKStream`` connects.
public struct SignalKStreamConfiguration: Sendable {
    /// The stream URL, `ws[s]://host:port/signalk/v1/stream` (use ``SignalKEndpoints/ws``). An `http(s)`
    /// URL is accepted too: the scheme becomes `ws(s)` and an empty path becomes `/signalk/v1/stream`.
    public var url: URL
    /// The `subscribe` query value. Default ``SignalKSubscribeMode/none``, as the contract requires
    /// (with `self`/`all` plus subscriptions the server sends every value twice).
    public var subscribe: SignalKSubscribeMode = .none
    /// `false` adds `sendCachedValues=false`.
    public var sendCachedValues: Bool = true
    /// `true` adds `sendMeta=all`.
    public var sendMeta: Bool = false
    /// Capacity of each consumer's event buffer. When a consumer is slower than the socket, the
    /// **oldest** buffered events are dropped and counted in ``SignalKStream/droppedEventCount``;
    /// the store itself is always complete.
    public var bufferSize: Int = 1024
    /// First reconnect delay; doubled per failed attempt up to ``maxBackoff``, reset after a hello.
    public var initialBackoff: Duration = .seconds(1)
    /// Largest reconnect delay.
    public var maxBackoff: Duration = .seconds(30)
    /// Relative jitter applied to each delay (0.2 = ±20 %).
    public var jitter: Double = 0.2
    /// Largest WebSocket frame accepted (WSClient's default of 16 KiB is too small), and largest
    /// message: the sum of a fragmented message's frames counts (see ``SignalKMessageReader``).
    public var maxFrameSize: Int = 1 << 20
    /// How long a message the server has begun may take to finish (its last fragment); beyond it
    /// the connection is closed with ``SignalKStreamError/messageUnfinished(after:)``.
    public var messageTimeout: Duration = .seconds(10)
    /// Send the token as `?token=` instead of the `Authorization: Bearer` header (only for stacks
    /// that cannot set headers; the query ends up in server logs).
    public var tokenInQuery: Bool = false
    /// Drop values already seen: same context, path, source and timestamp with the same value, or
    /// (from the same server run) an older timestamp. This hides the cached-value replay after a
    /// (re)subscribe or a server restart. Counted in
    /// ``SignalKStream/suppressedDuplicateCount``.
    public var deduplicate: Bool = true

    /// Creates a configuration for `url` (`ws`, `wss`, `http` or `https`).
    public init(url: URL) throws {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: true), let scheme = c.scheme?.lowercased(),
              c.host != nil else { throw SignalKClientError.invalidURL(url.absoluteString) }
        switch scheme {
        case "ws", "wss": break
        case "http": c.scheme = "ws"
        case "https": c.scheme = "wss"
        default: throw SignalKClientError.invalidURL("scheme \(scheme) is not ws, wss, http or https")
        }
        if c.path.isEmpty || c.path == "/" { c.path = "/signalk/v1/stream" }
        c.query = nil
        guard let u = c.url else { throw SignalKClientError.invalidURL(url.absoluteString) }
        self.url = u
    }

    /// The server's HTTP root (`http(s)://host:port`) for REST: where a refused upgrade is explained.
    public var serverRoot: URL {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: true)!
        c.scheme = c.scheme == "wss" ? "https" : "http"
        c.path = ""
        c.query = nil
        return c.url!
    }

    /// The URL actually connected to, with the query parameters (and `token` when ``tokenInQuery``).
    public func connectURL(token: String? = nil) -> URL {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: true)!
        var q = [URLQueryItem(name: "subscribe", value: subscribe.rawValue)]
        if !sendCachedValues { q.append(URLQueryItem(name: "sendCachedValues", value: "false")) }
        if sendMeta { q.append(URLQueryItem(name: "sendMeta", value: "all")) }
        if tokenInQuery, let token { q.append(URLQueryItem(name: "token", value: token)) }
        c.queryItems = q
        return c.url!
    }

    /// The reconnect delay before attempt `attempt` (1-based): `initialBackoff · 2^(attempt-1)`,
    /// capped at `maxBackoff`, times `1 + jitter · r` for `r` in −1…1.
    public func backoff(attempt: Int, random r: Double = Double.random(in: -1...1)) -> Duration {
        let base = Double(SignalKSubscription.milliseconds(initialBackoff)) * pow(2, Double(max(0, attempt - 1)))
        let capped = min(base, Double(SignalKSubscription.milliseconds(maxBackoff)))
        return .milliseconds(Int64(max(0, capped * (1 + jitter * max(-1, min(1, r))))))
    }
}

/// The connection state of a ``SignalKStream``.
public enum SignalKConnectionState: Sendable, Equatable {
    /// Not started.
    case idle
    /// Connecting (attempt 0 is the first connection).
    case connecting(attempt: Int)
    /// Connected and the hello has arrived.
    case connected(SignalKHello)
    /// The connection was lost or refused; retrying after `delay`.
    case waitingToReconnect(attempt: Int, delay: Duration)
    /// Closed by ``SignalKStream/close()`` (terminal).
    case closed
}

/// What a ``SignalKStream`` delivers to consumers.
public enum SignalKStreamEvent: Sendable {
    /// The connection state changed.
    case state(SignalKConnectionState)
    /// A hello arrived (the first frame of each connection).
    case hello(SignalKHello)
    /// A delta was applied to the store (after duplicate suppression); `changes` is what changed.
    case delta(SignalKDelta, changes: [SignalKChange])
    /// A JSON-string frame: subscription warning, unsubscribe error, security close reason.
    case warning(String)
    /// An `errorMessage` frame (the server usually closes afterwards).
    case serverError(String)
    /// A request reply (PUT, access request, login, query) that arrived on the socket.
    case reply(SignalKRequestReply)
    /// The stream closed the connection because the server broke a bound
    /// (``SignalKStreamError``); a reconnect follows. Emitted before the state change.
    case connectionError(SignalKStreamError)
    /// The server refused the upgrade because of the token (HTTP 401/403: invalid, expired or
    /// revoked; ``SignalKClientError/unauthorized(status:message:)``). Reconnects go on, asking the
    /// token provider again. Emitted before the state change.
    case unauthorized(SignalKClientError)
}

/// The Signal K WebSocket stream (contract §3): connects with `subscribe=none`, reads the hello,
/// feeds deltas into a ``SignalKStore``, and keeps the authoritative subscription set.
///
/// - **Subscriptions**: ``subscribe(_:context:)`` sends only new rows; changing or removing rows
///   sends the wildcard unsubscribe (the only form signalk-server accepts) and then the remaining rows.
/// - **Reconnect**: on loss the stream reconnects with exponential backoff and jitter, and after each
///   hello re-sends every active subscription once (one message per context). After a changed
///   `serverStartId` older timestamps are accepted again, but exact repeats are still suppressed;
///   a changed self drops the old self's values.
/// - **Consumers**: each ``events()`` call returns its own bounded stream. Policy when a consumer is
///   slower than the socket: the oldest buffered events are dropped and counted
///   (``droppedEventCount``); the store is always updated.
/// - **Tokens**: sent as `Authorization: Bearer` on the upgrade (or `?token=` when configured),
///   never inside messages.
/// - **A refused token**: WSClient reports a refused upgrade without its HTTP status, so when an
///   upgrade that carried a token is refused, the stream asks `GET /signalk/v1/api/self` with the
///   same token (contract §7: 401 means invalid). A 401/403 there is reported as
///   ``SignalKStreamEvent/unauthorized(_:)`` and kept in ``authFailure``; the stream keeps
///   retrying with backoff, asking the token provider each time.
public actor SignalKStream {
    /// The store the deltas are applied to.
    public nonisolated let store: SignalKStore
    /// The configuration.
    public nonisolated let configuration: SignalKStreamConfiguration
    private let tokenProvider: (@Sendable () async -> String?)?
    private let logger: Logger

    /// The current connection state.
    public private(set) var state: SignalKConnectionState = .idle
    /// Events dropped because a consumer's buffer was full (oldest dropped first).
    public private(set) var droppedEventCount = 0
    /// Values suppressed as already seen (see ``SignalKStreamConfiguration/deduplicate``).
    public private(set) var suppressedDuplicateCount = 0
    /// Frames that were not valid JSON or malformed messages (ignored).
    public private(set) var malformedFrameCount = 0
    /// Hellos received (1 after the first connection, +1 per reconnect).
    public private(set) var helloCount = 0
    /// `subscribe` messages sent over all connections.
    public private(set) var subscribeMessagesSent = 0
    /// The last hello.
    public private(set) var hello: SignalKHello?
    /// Why the stream last closed a connection itself (a message too large or unfinished); kept
    /// after reconnecting, so a server that keeps doing it stays visible.
    public private(set) var lastError: SignalKStreamError?
    /// Why the server last refused the token at the upgrade (cleared by the next hello).
    public private(set) var authFailure: SignalKClientError?

    private struct Key: Hashable { let context: String; let path: String }
    private var rows: [Key: SignalKSubscription] = [:]
    private var order: [Key] = []
    private var sentOnSocket: Set<Key> = []
    private var outbox: AsyncStream<String?>.Continuation?
    private var socketID = 0
    private var helloOnSocket = false
    private var runTask: Task<Void, Never>?
    private var closing = false
    private var consumers: [Int: AsyncStream<SignalKStreamEvent>.Continuation] = [:]
    private var batchConsumers: [SignalKEventQueue] = []
    private var nextConsumer = 0
    /// What identifies a value for duplicate suppression (no text is built per value).
    private struct SeenKey: Hashable {
        let context: String
        let path: String
        let source: String
    }
    /// The last value seen per context, path and source, with the server generation it came from.
    private var seen: [SeenKey: (time: Date, value: JSONValue, generation: Int)] = [:]
    /// Frames a socket's reader may parse ahead of the actor.
    static let inboxLimit = 1024
    /// Counts servers (a new `serverStartId` is a new server run).
    private var serverGeneration = 0

    /// Creates a stream (not yet connected; call ``start()``). `tokenProvider` is asked on every
    /// (re)connect, e.g. `{ await tokenStore.token() }`.
    public init(configuration: SignalKStreamConfiguration, store: SignalKStore = SignalKStore(),
                tokenProvider: (@Sendable () async -> String?)? = nil,
                logger: Logger = Logger(label: "SignalKKit.stream")) {
        self.configuration = configuration
        self.store = store
        self.tokenProvider = tokenProvider
        self.logger = logger
    }

    /// The active subscriptions, in the order they were added, with their contexts.
    public var subscriptions: [(context: String, subscription: SignalKSubscription)] {
        order.compactMap { k in rows[k].map { (k.context, $0) } }
    }

    /// A new event stream for one consumer; it ends when the stream is closed. The current state is
    /// delivered first. Buffer: ``SignalKStreamConfiguration/bufferSize``, dropping the oldest.
    public func events() -> AsyncStream<SignalKStreamEvent> {
        let (s, c) = AsyncStream<SignalKStreamEvent>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, configuration.bufferSize)))
        if state == .closed { c.yield(.state(state)); c.finish(); return s }
        let id = nextConsumer
        nextConsumer += 1
        consumers[id] = c
        c.onTermination = { [weak self] _ in Task { await self?.removeConsumer(id) } }
        c.yield(.state(state))
        return s
    }

    /// A new consumer that takes its events in batches (see ``SignalKEventQueue``): the cheap way
    /// to follow a busy stream. The current state is delivered first; it ends when the stream is
    /// closed. Buffer: ``SignalKStreamConfiguration/bufferSize`` events, dropping the oldest.
    public func eventBatches() -> SignalKEventQueue {
        let queue = SignalKEventQueue(capacity: max(1, configuration.bufferSize))
        queue.append([.state(state)])
        if state == .closed { queue.finish() } else { batchConsumers.append(queue) }
        return queue
    }

    private func removeConsumer(_ id: Int) { consumers[id] = nil }

    private func emit(_ e: SignalKStreamEvent) {
        for c in consumers.values {
            if case .dropped = c.yield(e) { droppedEventCount += 1 }
        }
        if !batchConsumers.isEmpty { emitToBatchConsumers([e]) }
    }

    /// Emits `events` in order: one hand-off per batch consumer.
    private func emit(_ events: [SignalKStreamEvent]) {
        guard !events.isEmpty else { return }
        for c in consumers.values {
            for e in events {
                if case .dropped = c.yield(e) { droppedEventCount += 1 }
            }
        }
        emitToBatchConsumers(events)
    }

    private func emitToBatchConsumers(_ events: [SignalKStreamEvent]) {
        var stopped = false
        for q in batchConsumers {
            if q.isCancelled { stopped = true; continue }
            droppedEventCount += q.append(events)
        }
        if stopped { batchConsumers.removeAll { $0.isCancelled } }
    }

    private func setState(_ s: SignalKConnectionState) {
        guard s != state else { return }
        state = s
        emit(.state(s))
    }

    /// Starts connecting (and reconnecting) in the background. Does nothing when already started
    /// or closed.
    public func start() {
        guard runTask == nil, !closing else { return }
        runTask = Task { await self.run() }
    }

    /// Closes the socket (normal closure), stops reconnecting and ends every event stream. Waits
    /// until the connection task has finished.
    public func close() async {
        closing = true
        outbox?.yield(nil)
        let t = runTask
        // The writer sends the close frame first; the run ends with the close handshake (at most
        // its 2 s timeout), and is cancelled only if it has not ended by then.
        let deadline = Task {
            try? await Task.sleep(for: .seconds(2.5))
            t?.cancel()
        }
        await t?.value
        deadline.cancel()
        setState(.closed)
        for c in consumers.values { c.finish() }
        consumers.removeAll()
        for q in batchConsumers { q.finish() }
        batchConsumers.removeAll()
    }

    // MARK: subscriptions

    /// Adds subscription rows for `context` (default `vessels.self`; `vessels.*` for AIS). Rows whose
    /// (context, path) is already active with the same options are ignored; new rows are sent at
    /// once when connected (only them: the server does not dedupe). A row that changes an active
    /// path's options replaces it: the stream then sends the wildcard unsubscribe and every row again.
    public func subscribe(_ newRows: [SignalKSubscription], context: String = SignalKContext.selfAlias) {
        var reset = false
        for r in newRows {
            let k = Key(context: context, path: r.path)
            if let old = rows[k] {
                if old != r { rows[k] = r; reset = true }
            } else {
                rows[k] = r
                order.append(k)
            }
        }
        if reset { resendAll() } else { sendPending() }
    }

    /// Removes the rows for `paths` in `context`. signalk-server only accepts the wildcard
    /// unsubscribe, so the stream sends it and then re-subscribes the remaining rows (whose cached
    /// values the server replays; duplicate suppression hides them).
    public func unsubscribe(paths: [String], context: String = SignalKContext.selfAlias) {
        var removed = false
        for p in paths where rows.removeValue(forKey: Key(context: context, path: p)) != nil { removed = true }
        guard removed else { return }
        order.removeAll { rows[$0] == nil }
        resendAll()
    }

    /// Removes every subscription (sends `{"context":"*","unsubscribe":[{"path":"*"}]}`, which also
    /// ends the implicit `subscribe=self|all` stream).
    public func unsubscribeAll() {
        rows.removeAll()
        order.removeAll()
        resendAll()
    }

    /// Sends a raw JSON text frame on the current connection (e.g. a WebSocket PUT); `false` when
    /// not connected. Never put a token in it: servers ignore tokens inside messages.
    @discardableResult
    public func send(_ text: String) -> Bool {
        guard let outbox, helloOnSocket else { return false }
        outbox.yield(text)
        return true
    }

    /// Publishes a delta on the current connection (§4.4: the server needs write permission —
    /// security off, or a `readwrite`/`admin` token — and silently ignores it otherwise); `false`
    /// when not connected. Nothing is queued across reconnects: a value published while the
    /// stream is down is the caller's to send again.
    @discardableResult
    public func publish(_ delta: SignalKDelta) -> Bool { send(delta.jsonValue.jsonString) }

    private func resendAll() {
        guard let outbox, helloOnSocket else { return }
        outbox.yield(SignalKUnsubscribeAllMessage().jsonString)
        sentOnSocket.removeAll()
        sendPending()
    }

    private func sendPending() {
        guard let outbox, helloOnSocket else { return }
        var groups: [(String, [SignalKSubscription])] = []
        for k in order where !sentOnSocket.contains(k) {
            guard let r = rows[k] else { continue }
            if let i = groups.firstIndex(where: { $0.0 == k.context }) { groups[i].1.append(r) } else { groups.append((k.context, [r])) }
            sentOnSocket.insert(k)
        }
        for (ctx, rs) in groups {
            outbox.yield(SignalKSubscribeMessage(context: ctx, subscribe: rs).jsonString)
            subscribeMessagesSent += 1
        }
    }

    // MARK: connection

    private func run() async {
        var attempt = 0
        while !Task.isCancelled && !closing {
            setState(.connecting(attempt: attempt))
            let gotHello = await connectOnce()
            if Task.isCancelled || closing { break }
            attempt = gotHello ? 1 : attempt + 1
            let delay = configuration.backoff(attempt: attempt)
            setState(.waitingToReconnect(attempt: attempt, delay: delay))
            do { try await Task.sleep(for: delay) } catch { break }
        }
    }

    /// One connection; returns whether a hello arrived.
    private func connectOnce() async -> Bool {
        socketID += 1
        let id = socketID
        helloOnSocket = false
        sentOnSocket.removeAll()
        let (out, cont) = AsyncStream<String?>.makeStream()
        outbox = cont
        let token = await tokenProvider?()
        var headers = HTTPFields()
        if let token, !configuration.tokenInQuery { headers[.authorization] = "Bearer " + token }
        let url = configuration.connectURL(token: token).absoluteString
        let maxFrame = configuration.maxFrameSize
        let reader = SignalKMessageReader(maxSize: maxFrame, timeout: configuration.messageTimeout)
        var gotHello = false
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(maxFrameSize: maxFrame, additionalHeaders: headers, closeTimeout: .seconds(2)),
                logger: logger
            ) { inbound, outbound, _ in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await item in out {
                            guard let text = item else {
                                try await outbound.close(.normalClosure, reason: nil)
                                return
                            }
                            try await outbound.write(.text(text))
                        }
                    }
                    group.addTask {
                        // The reader parses frames on this task's child; the actor takes them in batches.
                        let inbox = SignalKInbox(limit: Self.inboxLimit)
                        async let reading: Void = Self.read(inbound, with: reader, into: inbox)
                        await self.drain(inbox, socket: id)
                        try await reading
                    }
                    _ = try await group.next()
                    group.cancelAll()
                }
            }
        } catch let error as SignalKStreamError {
            logger.debug("stream connection ended: \(error)")
            if socketID == id {
                lastError = error
                emit(.connectionError(error))
            }
        } catch {
            logger.debug("stream connection ended: \(error)")
            if let token, !helloOnSocket, socketID == id, let refusal = await Self.tokenRefusal(configuration.serverRoot, token: token),
               socketID == id {
                authFailure = refusal
                emit(.unauthorized(refusal))
            }
        }
        gotHello = helloOnSocket
        if socketID == id {
            outbox = nil
            helloOnSocket = false
        }
        cont.finish()
        return gotHello
    }

    /// Whether `token` is why an upgrade failed: `GET /signalk/v1/api/self` with it answers 401/403
    /// (contract §3.2, §7). `nil` when REST accepts it or cannot say.
    static func tokenRefusal(_ server: URL, token: String) async -> SignalKClientError? {
        do {
            _ = try await SignalKREST(server: server, tokenProvider: { token }).get("self")
        } catch let e as SignalKClientError {
            if case .unauthorized = e { return e }
        } catch {}
        return nil
    }

    /// Reads a socket's messages (within `reader`'s bounds) and parses them off the actor, into
    /// `inbox` (closed at the end).
    private static func read(_ frames: WebSocketInboundStream, with reader: SignalKMessageReader, into inbox: SignalKInbox) async throws {
        defer { inbox.close() }
        try await reader.read(frames) { text in
            let item = SignalKInbox.Item { try SignalKServerMessage.parse(text) }
            return await inbox.put(item, size: text.utf8.count)
        }
    }

    /// Handles the parsed frames of socket `id` a batch at a time, until the reader ends.
    private func drain(_ inbox: SignalKInbox, socket id: Int) async {
        while let batch = await inbox.take() {
            await handle(batch, socket: id)
        }
        inbox.close()  // a cancelled drain releases a waiting reader
    }

    /// One batch, in order: deltas are deduplicated one by one, applied to the store together and
    /// emitted together (one hand-off per consumer); any other message first flushes the deltas
    /// before it.
    private func handle(_ batch: [SignalKInbox.Item], socket id: Int) async {
        var deltas: [SignalKDelta] = []
        for item in batch {
            guard id == socketID, !closing else { break }
            switch item {
            case .failure:
                malformedFrameCount += 1
            case .success(.delta(let d)):
                let filtered = configuration.deduplicate ? dedupe(d) : d
                if !filtered.updates.isEmpty { deltas.append(filtered) }
            case .success(let message):
                await apply(&deltas)
                guard id == socketID, !closing else { break }
                await handle(message)
            }
        }
        await apply(&deltas)
    }

    /// Applies `deltas` to the store in one call and emits them; empties `deltas`.
    private func apply(_ deltas: inout [SignalKDelta]) async {
        guard !deltas.isEmpty else { return }
        let batch = deltas
        deltas = []
        let changes = await store.apply(batch)
        var events: [SignalKStreamEvent] = []
        events.reserveCapacity(batch.count)
        for (d, c) in zip(batch, changes) { events.append(.delta(d, changes: c)) }
        emit(events)
    }

    /// A message that is not a delta.
    private func handle(_ message: SignalKServerMessage) async {
        switch message {
        case .hello(let h):
            // A restarted server may replay values with older timestamps: from then on only exact
            // repeats (same time and value) of what an earlier run sent are suppressed.
            if let old = hello?.serverStartId, old != h.serverStartId { serverGeneration += 1 }
            if let old = hello?.selfContext, old != h.selfContext { seen.removeAll() }
            hello = h
            await store.apply(message)
            helloCount += 1
            helloOnSocket = true
            authFailure = nil
            sentOnSocket.removeAll()
            setState(.connected(h))
            emit(.hello(h))
            sendPending()
        case .warning(let s): emit(.warning(s))
        case .error(let s): emit(.serverError(s))
        case .reply(let r): emit(.reply(r))
        default: break
        }
    }

    /// Drops values already seen (see ``SignalKStreamConfiguration/deduplicate``). A delta with
    /// nothing to drop is returned as it is (no copy).
    private func dedupe(_ d: SignalKDelta) -> SignalKDelta {
        let ctx = d.resolvedContext(selfContext: hello?.selfContext)
        var out: SignalKDelta?
        for (i, u) in d.updates.enumerated() {
            guard let ts = u.timestamp else {
                out?.updates.append(u)
                continue
            }
            let src = u.sourceRef ?? ""
            var kept: [SignalKPathValue]? = u.values.isEmpty && u.meta.isEmpty ? [] : nil  // an empty update goes
            for (j, pv) in u.values.enumerated() {
                let key = SeenKey(context: ctx, path: pv.path, source: src)
                if let last = seen[key],
                   (ts == last.time && pv.value == last.value) || (ts < last.time && last.generation == serverGeneration) {
                    suppressedDuplicateCount += 1
                    if kept == nil { kept = Array(u.values[..<j]) }
                    continue
                }
                seen[key] = (ts, pv.value, serverGeneration)
                kept?.append(pv)
            }
            if let kept {
                // Something was dropped: from here on the delta is a copy.
                if out == nil { out = SignalKDelta(context: d.context, updates: Array(d.updates[..<i])) }
                var u2 = u
                u2.values = kept
                if !(kept.isEmpty && u2.meta.isEmpty) { out!.updates.append(u2) }
            } else {
                out?.updates.append(u)
            }
        }
        return out ?? d
    }
}
