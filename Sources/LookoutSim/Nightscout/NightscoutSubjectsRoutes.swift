import Foundation
import LookoutWire

/// A role stored through `/api/v2/authorization/roles`.
struct NSRoleDoc: Sendable {
    var id: String
    var name: String
    var permissions: [String]
    var notes: String?
    var createdAt: String

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "_id": .string(id), "name": .string(name), "permissions": .array(permissions.map(JSONValue.string)),
            "created_at": .string(createdAt),
        ]
        if let notes { o["notes"] = .string(notes) }
        return .object(o)
    }
}

extension NightscoutAuth {
    // MARK: subjects (Admin Tools)

    /// `GET /subjects`: `{_id, name, accessToken, roles}` of each subject, by name.
    func subjectList() -> JSONValue {
        .array(subjects.sorted { $0.name < $1.name }.map { s in
            ["_id": .string(s.id), "name": .string(s.name), "accessToken": .string(accessToken(for: s)),
             "roles": .array(s.roles.map(JSONValue.string))]
        })
    }

    /// Stores a subject (a new one, or the one with its `_id`) and returns it as stored.
    func storeSubject(_ s: NightscoutSubject) -> JSONValue {
        if let i = subjects.firstIndex(where: { $0.id == s.id }) { subjects[i] = s } else { subjects.append(s) }
        var o: [String: JSONValue] = [
            "_id": .string(s.id), "name": .string(s.name), "roles": .array(s.roles.map(JSONValue.string)),
            "created_at": .string(s.createdAt ?? ""),
        ]
        if let notes = s.notes { o["notes"] = .string(notes) }
        return .object(o)
    }

    func removeSubject(id: String) { subjects.removeAll { $0.id == id } }

    // MARK: roles

    /// `GET /roles`: stored roles, then built-in and option roles no stored role shadows, by name.
    func roleList() -> JSONValue {
        var out = roleDocs.map { ($0.name, $0.json) }
        let stored = Set(roleDocs.map(\.name))
        var virtual = NightscoutAuth.builtInRoles
        for (k, v) in optionRoles { virtual[k] = v }
        for (name, perms) in virtual where !stored.contains(name) {
            out.append((name, ["name": .string(name), "permissions": .array(perms.map(JSONValue.string))]))
        }
        return .array(out.sorted { $0.0 < $1.0 }.map(\.1))
    }

    func storeRole(_ r: NSRoleDoc) -> JSONValue {
        if let i = roleDocs.firstIndex(where: { $0.id == r.id }) { roleDocs[i] = r } else { roleDocs.append(r) }
        rebuildRoles()
        return r.json
    }

    func removeRole(id: String) {
        roleDocs.removeAll { $0.id == id }
        rebuildRoles()
    }

    /// Effective roles: stored roles win over option and built-in ones of the same name.
    private func rebuildRoles() {
        var r = NightscoutAuth.builtInRoles
        for (k, v) in optionRoles { r[k] = v }
        var seen: Set<String> = []
        for doc in roleDocs where seen.insert(doc.name).inserted { r[doc.name] = doc.permissions }
        roles = r
    }
}

/// `/api/v2/authorization/subjects` and `/roles` (`lib/authorization/endpoints.js`): CRUD for an
/// admin (API secret or a subject with `admin`); every answer as Nightscout's (arrays, the stored
/// object, `{}` after DELETE; `Mongo Error` 500 for a missing or bad `_id` on PUT).
enum NightscoutSubjectsRoutes {
    static func mongoError(_ description: String) -> SimResponse {
        .json(500, ["status": 500, "message": "Mongo Error", "description": .string(description)])
    }

    /// The `_id` a PUT body must carry, or the 500 answer.
    static func requiredID(_ body: [String: JSONValue]) -> Result<String, SimResponse> {
        guard let v = body["_id"], v != .null, v != .string("") else { return .failure(mongoError("Missing _id for update")) }
        guard let s = v.stringValue, NSObjectId.isValid(s) else {
            return .failure(mongoError("Invalid _id format: \(v.stringValue ?? v.jsonString)"))
        }
        return .success(s.lowercased())
    }

    static func strings(_ v: JSONValue?) -> [String] {
        if let a = v?.arrayValue { return a.compactMap(\.stringValue) }
        if let s = v?.stringValue { return s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        return []
    }

    /// Subjects: `GET`, `POST`, `PUT` on `/subjects`; `DELETE /subjects/{id}`.
    static func subjects(_ ctx: NightscoutV1.Ctx, id: String?) async -> SimResponse {
        let auth = ctx.sim.auth
        return await crud(
            ctx, id: id, permission: "admin:api:subjects", listVerb: "read", what: "subject",
            list: { await auth.subjectList() },
            store: { body, id, created in
                await auth.storeSubject(NightscoutSubject(
                    name: body["name"]?.stringValue ?? "", roles: strings(body["roles"]), id: id,
                    notes: body["notes"]?.stringValue, createdAt: created))
            },
            remove: { await auth.removeSubject(id: $0) })
    }

    /// Roles: `GET`, `POST`, `PUT` on `/roles`; `DELETE /roles/{id}`.
    static func roles(_ ctx: NightscoutV1.Ctx, id: String?) async -> SimResponse {
        let auth = ctx.sim.auth
        return await crud(
            ctx, id: id, permission: "admin:api:roles", listVerb: "list", what: "role",
            list: { await auth.roleList() },
            store: { body, id, created in
                await auth.storeRole(NSRoleDoc(
                    id: id, name: body["name"]?.stringValue ?? "", permissions: strings(body["permissions"]),
                    notes: body["notes"]?.stringValue, createdAt: created))
            },
            remove: { await auth.removeRole(id: $0) })
    }

    /// The four operations of `endpoints.js` on one kind: `GET` lists (permission
    /// `<permission>:<listVerb>`), `POST` creates, `PUT` saves by `_id`, `DELETE` removes by id.
    static func crud(
        _ ctx: NightscoutV1.Ctx, id: String?, permission: String, listVerb: String, what: String,
        list: () async -> JSONValue,
        store: ([String: JSONValue], String, String) async -> JSONValue,
        remove: (String) async -> Void
    ) async -> SimResponse {
        switch ctx.req.method {
        case "GET":
            guard ctx.can("\(permission):\(listVerb)") else { return NightscoutV1.unauthorized }
            return .json(200, await list())
        case "POST", "PUT":
            let put = ctx.req.method == "PUT"
            guard ctx.can("\(permission):\(put ? "update" : "create")") else { return NightscoutV1.unauthorized }
            guard let body = ctx.body?.objectValue, let name = body["name"]?.stringValue, !name.isEmpty else {
                return mongoError("a \(what) needs a name")
            }
            var docID = NSObjectId.make()
            if put {
                switch requiredID(body) {
                case .failure(let r): return r
                case .success(let s): docID = s
                }
            }
            return .json(200, await store(body, docID, body["created_at"]?.stringValue ?? NSDates.iso(ctx.now)))
        case "DELETE":
            guard ctx.can("\(permission):delete") else { return NightscoutV1.unauthorized }
            guard let id, NSObjectId.isValid(id) else { return mongoError("Invalid _id format: \(id ?? "undefined")") }
            await remove(id.lowercased())
            return .json(200, [:])
        default:
            return NightscoutV1.notFound
        }
    }
}
