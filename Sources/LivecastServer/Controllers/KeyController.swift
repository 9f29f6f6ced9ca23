import Hummingbird
import LivecastStore
import Logging

/// `POST`, `GET /v1/apps/{bundleId}/keys` and `DELETE …/keys/{keyId}` (admin): the app's API keys.
struct KeyController: APIController {
    let keys: APIKeys
    /// The callers of keys that authenticated on this server, which forgets a revoked key at once.
    let keyCache: KeyCache

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/keys", role: .admin) { request, context, scope in
            let body = try await request.decodeJSON(as: CreateKeyBody.self, context: context)
            guard let role = APIKeys.Role(rawValue: body.role) else {
                throw APIError.invalid("role must be client, backend, operator or admin", field: "role")
            }
            let (key, secret) = try await self.keys.logging(to: context.logger).create(appID: scope.appID, role: role)
            context.logger.info("API key created", metadata: ["livecast.new_key_id": "\(key.id)", "livecast.role": "\(role.rawValue)"])
            return try .json(CreatedKeyBody(created: key, text: secret), status: .created)
        }
        routes.app(.get, "/v1/apps/{bundleId}/keys", role: .admin) { _, context, scope in
            try .json(KeyListBody(keys: try await self.keys.logging(to: context.logger).list(appID: scope.appID)))
        }
        routes.app(.delete, "/v1/apps/{bundleId}/keys/{keyId}", role: .admin) { _, context, scope in
            let keyID = try context.parameters.id("keyId")
            guard let key = try await self.keys.logging(to: context.logger).revoke(appID: scope.appID, keyID: keyID) else {
                throw APIError.notFound("no key \(keyID)", field: "keyId")
            }
            // The other servers forget it when PostgreSQL's notification arrives; this one before it answers.
            self.keyCache.forget(prefix: key.prefix)
            return try .json(key)
        }
    }
}
