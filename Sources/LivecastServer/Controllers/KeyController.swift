import Hummingbird
import LivecastStore
import Logging

/// `POST`, `GET /v1/apps/{bundleId}/keys` and `DELETE …/keys/{keyId}` (admin): the app's API keys. Revoking one says
/// how many scheduled sends it made are still to go, and can cancel them.
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
            return EditedResponse(status: .created, response: CreatedKeyBody(created: key, text: secret))
        }
        routes.app(.get, "/v1/apps/{bundleId}/keys", role: .admin) { _, context, scope in
            KeyListBody(keys: try await self.keys.logging(to: context.logger).list(appID: scope.appID))
        }
        // The key, with its scheduled sends still to go; `?cancelScheduledSends=true` cancels them too.
        routes.app(.delete, "/v1/apps/{bundleId}/keys/{keyId}", role: .admin) { request, context, scope in
            let keyID = try context.parameters.id("keyId")
            let cancel: Bool
            switch request.uri.queryParameters.get("cancelScheduledSends") {
            case nil, "false": cancel = false
            case "true": cancel = true
            default: throw APIError.invalid("cancelScheduledSends must be true or false", field: "cancelScheduledSends")
            }
            let keys = self.keys.logging(to: context.logger)
            guard let revocation = try await keys.revoke(appID: scope.appID, keyID: keyID, cancellingScheduledSends: cancel) else {
                throw APIError.notFound("no key \(keyID)", field: "keyId")
            }
            // The other servers forget it when PostgreSQL's notification arrives; this one before it answers.
            self.keyCache.forget(prefix: revocation.key.prefix)
            context.logger.info(
                "API key revoked",
                metadata: [
                    "livecast.revoked_key_id": "\(keyID)", "livecast.scheduled_sends": "\(revocation.scheduledSends)",
                    "livecast.cancelled_scheduled_sends": "\(revocation.cancelledScheduledSends)",
                ]
            )
            return revocation
        }
    }
}
