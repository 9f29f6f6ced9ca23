import Hummingbird
import LivecastStore
import Logging

extension LivecastAPI {
    /// `GET /v1/apps/{bundleId}` (admin): the caller's app; `POST …/sending:resume` (admin): lets it send again
    /// after the invalidation guard held it.
    func addAppRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}", role: .admin) { _, _, scope in
            guard let app = try await self.apps.app(id: scope.appID) else { throw APIError.notFound("no app \(scope.bundleID)") }
            return try .json(app)
        }
        routes.app(.post, "/v1/apps/{bundleId}/sending:resume", role: .admin) { _, _, scope in
            guard try await self.apps.resumeSending(id: scope.appID) else {
                throw APIError(.conflict, code: "conflict", "the app's sending is not held")
            }
            self.logger.notice("resumed an app's sending", metadata: ["app": "\(scope.bundleID)"])
            guard let app = try await self.apps.app(id: scope.appID) else { throw APIError.notFound("no app \(scope.bundleID)") }
            return try .json(app)
        }
    }

    /// `POST`, `GET /v1/apps/{bundleId}/keys` and `DELETE …/keys/{keyId}` (admin).
    func addKeyRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/keys", role: .admin) { request, context, scope in
            let body = try await request.decodeJSON(as: CreateKeyBody.self, context: context)
            guard let role = APIKeys.Role(rawValue: body.role) else {
                throw APIError.invalid("role must be client, backend, operator or admin", field: "role")
            }
            let (key, secret) = try await self.keys.create(appID: scope.appID, role: role)
            context.logger.info("API key created", metadata: ["livecast.new_key_id": "\(key.id)", "livecast.role": "\(role.rawValue)"])
            return try .json(CreatedKeyBody(created: key, text: secret), status: .created)
        }
        routes.app(.get, "/v1/apps/{bundleId}/keys", role: .admin) { _, _, scope in
            try .json(KeyListBody(keys: try await self.keys.list(appID: scope.appID)))
        }
        routes.app(.delete, "/v1/apps/{bundleId}/keys/{keyId}", role: .admin) { _, context, scope in
            let keyID = try context.parameters.id("keyId")
            guard let key = try await self.keys.revoke(appID: scope.appID, keyID: keyID) else {
                throw APIError.notFound("no key \(keyID)", field: "keyId")
            }
            // The other servers forget it when PostgreSQL's notification arrives; this one before it answers.
            self.keyCache.forget(prefix: key.prefix)
            return try .json(key)
        }
    }
}
