import Foundation
import Lua
import NightscoutKit

/// Reading: `entries`, `treatments`, `devicestatus`, `search`, `read`, `profile`, `latest`,
/// `last_modified`, `status`, `api`.
extension NightscoutSite {
    static var readMethods: [String: LuaBinding] {
        [
            "entries": { call in try read(call, .entries, argument: 1, defaultCount: 10) },
            "treatments": { call in try read(call, .treatments, argument: 1, defaultCount: 100) },
            "devicestatus": { call in try read(call, .devicestatus, argument: 1, defaultCount: 10) },
            "search": { call in try read(call, try collection(call, 1), argument: 2, defaultCount: 100) },
            "read": { call in try readOne(call) },
            "profile": { call in try profile(call) },
            "latest": { call in try latest(call) },
            "last_modified": { call in try lastModified(call) },
            "status": { call in try status(call) },
            "api": { call in
                let client = try site(call).client
                return try wait(call, "nightscout api", { try await client.resolvedAPI() }) { stack, api in
                    stack.push(api.rawValue)
                    return 1
                }
            },
        ]
    }

    /// `self` of a method call.
    static func site(_ call: LuaCall) throws(LuaRaise) -> NightscoutSite {
        try call.object(as: NightscoutSite.self, type: NightscoutSite.type)
    }

    /// Argument `n` as a collection name.
    static func collection(_ call: LuaCall, _ n: Int) throws(LuaRaise) -> V3Collection {
        let name = try call.string(n)
        guard let collection = V3Collection(rawValue: name) else {
            let known = V3Collection.allCases.map(\.rawValue).joined(separator: ", ")
            throw call.argumentError(n, "unknown collection '\(name)' (known: \(known))")
        }
        return collection
    }

    /// Reads documents with the API in use; pages of 1000 on v3.
    static func read(_ call: LuaCall, _ collection: V3Collection, argument n: Int, defaultCount: Int) throws -> LuaReturn {
        let client = try site(call).client
        let query = try NightscoutReadQuery(call, argument: n, collection: collection, defaultCount: defaultCount, now: call.engine.clock.now())
        let engine = call.engine
        return try wait(call, "nightscout \(collection.rawValue)", {
            let api = try await client.resolvedAPI()
            guard api == .v3 else {
                let (path, items) = try query.v1Request()
                return NightscoutDocuments.Bodies(api: .v1, bodies: [try await client.v1JSON("GET", path, query: items)])
            }
            var bodies: [Data] = []
            let pages = try query.v3Pages()
            for page in pages {
                let body = try await client.v3JSON("GET", collection.path, query: page.queryItems).body
                bodies.append(body)
                if pages.count > 1, try PageCount.of(body) < page.limit { break }
            }
            return NightscoutDocuments.Bodies(api: .v3, bodies: bodies)
        }) { stack, answer in
            NightscoutDocuments.pushList(answer, collection: collection, stack: stack, engine: engine)
        }
    }

    /// The number of documents in a v3 page (for paging past 1000), counted by the byte scanner:
    /// a document with a number beyond `Double`'s range is counted (and later dropped with a
    /// warning), not a reason to refuse the page.
    enum PageCount {
        static func of(_ body: Data) throws -> Int {
            do { return try MirrorDocument.elementCount(v3Envelope: body) }
            catch { throw NightscoutError.decoding("expected a v3 page of documents") }
        }
    }

    /// Throws unless the client uses API v3 (identifiers, history and server times exist only
    /// there), saying why it does not: the profile asks for v1, the server has no v3 (the client
    /// fell back), or the credentials cannot use v3.
    static func requireV3(_ client: NightscoutClient, for what: String) async throws {
        guard try await client.resolvedAPI() == .v3 else {
            let configuration = client.configuration
            let why: String
            if configuration.preferredAPI == .v1 {
                why = "the profile asks for API v1 (api = \"v1\")"
            } else if configuration.credentials.supportsV3 {
                why = "this server has no API v3 (it answered 404 to /api/v3/version: a Nightscout older than 14)"
            } else {
                why = "configure an access token instead of the API secret"
            }
            throw NightscoutError.unsupportedCredentials("\(what) needs API v3: \(why)")
        }
    }

    /// Fetches one JSON document with `fetch` and pushes it (dates completed for a `collection`).
    /// An `api` of v3 means the call needs v3; v1 calls work with any credentials.
    static func fetchDocument(_ call: LuaCall, _ what: String, api: NightscoutAPIVersion, collection: V3Collection?,
                              missing: String = "the site has no such document",
                              _ fetch: @escaping @Sendable (NightscoutClient) async throws -> Data) throws -> LuaReturn {
        let client = try site(call).client
        let engine = call.engine
        return try wait(call, "nightscout " + what, {
            if api == .v3 { try await requireV3(client, for: what) }
            return try await fetch(client)
        }) { stack, body in
            NightscoutDocuments.pushDocument(body, api: api, collection: collection, missing: missing, stack: stack, engine: engine)
        }
    }

    /// `home:read(collection, identifier)`: one document, or `nil, err` (404 absent, 410 deleted).
    static func readOne(_ call: LuaCall) throws -> LuaReturn {
        let collection = try collection(call, 1)
        let identifier = try identifierArgument(call, 2)
        let path = collection.path + "/" + NightscoutRequest.percentEncode(identifier)
        return try fetchDocument(call, "read", api: .v3, collection: collection) { try await $0.v3JSON("GET", path).body }
    }

    /// `home:profile()`: the newest profile document, with schedule lookups as methods.
    public static func profile(_ call: LuaCall) throws -> LuaReturn {
        try fetchDocument(call, "profile", api: .v1, collection: .profile,
                          missing: "the site has no profile (create one in Nightscout's profile editor)") {
            try await $0.v1JSON("GET", "/profile/current")
        }
    }

    /// `home:last_modified()`: `{srvDate=…, collections={entries=…, …}}` (epoch ms).
    static func lastModified(_ call: LuaCall) throws -> LuaReturn {
        try fetchDocument(call, "last_modified", api: .v3, collection: nil) {
            try await $0.v3JSON("GET", NightscoutAPIVersion.v3.pathPrefix + "/lastModified").body
        }
    }

    /// `home:status()`: the server's v1 status (`version`, `settings`, …).
    public static func status(_ call: LuaCall) throws -> LuaReturn {
        try fetchDocument(call, "status", api: .v1, collection: nil) { try await $0.v1JSON("GET", "/status.json") }
    }
}
