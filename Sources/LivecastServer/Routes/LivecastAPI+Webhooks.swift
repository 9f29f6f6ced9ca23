import Foundation
import Hummingbird
import LivecastStore
import Logging

extension LivecastAPI {
    /// The app's webhook endpoints (operator): `POST`/`GET /v1/apps/{bundleId}/webhooks`, `GET`/`PATCH`/`DELETE
    /// …/webhooks/{webhookId}`, `POST …/{webhookId}/secret:rotate`, `GET …/{webhookId}/failed` and `POST
    /// …/{webhookId}/failed:replay`. The secret is shown only by the creation and the rotation; both need the master
    /// key (`409 master_key_required` without one).
    func addWebhookRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/webhooks", role: .operator) { request, context, scope in
            let body = try await request.decodeJSON(as: CreateWebhookBody.self, context: context)
            let url = try WebhookURL(body.url, allowPrivate: self.configuration.webhookAllowPrivate)
            let events = try EventType.parse(body.events ?? [], field: "events")
            let masterKey = try self.webhookMasterKey()
            let (endpoint, secret) = try await self.webhookEndpoints.create(appID: scope.appID, url: url, events: events, masterKey: masterKey)
            context.logger.info("Webhook endpoint created", metadata: ["livecast.webhook_id": "\(endpoint.id.uuidString.lowercased())"])
            return try .json(WebhookSecretBody(endpoint: endpoint, secret: secret.text), status: .created)
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks", role: .operator) { _, _, scope in
            try .json(WebhookListBody(webhooks: try await self.webhookEndpoints.list(appID: scope.appID)))
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { _, context, scope in
            let id = try Self.webhookID(context)
            guard let endpoint = try await self.webhookEndpoints.endpoint(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            return try .json(endpoint)
        }
        routes.app(.patch, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { request, context, scope in
            let id = try Self.webhookID(context)
            let body = try await request.decodeJSON(as: UpdateWebhookBody.self, context: context)
            let changes = WebhookEndpoints.Changes(
                enabled: body.enabled,
                events: try body.events.map { names throws(StoreError) in try EventType.parse(names, field: "events") },
                url: try body.url.map { text throws(StoreError) in try WebhookURL(text, allowPrivate: self.configuration.webhookAllowPrivate) }
            )
            guard let endpoint = try await self.webhookEndpoints.update(appID: scope.appID, id: id, changes: changes) else {
                throw Self.noWebhook(id)
            }
            return try .json(endpoint)
        }
        routes.app(.delete, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { _, context, scope in
            let id = try Self.webhookID(context)
            guard try await self.webhookEndpoints.delete(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            context.logger.info("Webhook endpoint removed", metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())"])
            return Response(status: .noContent)
        }
        routes.app(.post, "/v1/apps/{bundleId}/webhooks/{webhookId}/secret:rotate", role: .operator) { _, context, scope in
            let id = try Self.webhookID(context)
            let masterKey = try self.webhookMasterKey()
            guard let rotated = try await self.webhookEndpoints.rotateSecret(appID: scope.appID, id: id, masterKey: masterKey) else {
                throw Self.noWebhook(id)
            }
            context.logger.info("Webhook secret rotated", metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())"])
            return try .json(WebhookSecretBody(endpoint: rotated.endpoint, secret: rotated.secret.text))
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks/{webhookId}/failed", role: .operator) { request, context, scope in
            let id = try Self.webhookID(context)
            let parameters = request.uri.queryParameters
            let limit = try Self.pageLimit(parameters)
            let after = try Self.integer(parameters, "after", in: 0...Int64.max)
            guard
                let deliveries = try await self.webhookEndpoints.failedDeliveries(appID: scope.appID, id: id, after: after, limit: limit + 1)
            else { throw Self.noWebhook(id) }
            return try .json(Self.page("deliveries", deliveries, limit: limit) { $0.id })
        }
        routes.app(.post, "/v1/apps/{bundleId}/webhooks/{webhookId}/failed:replay", role: .operator) { _, context, scope in
            let id = try Self.webhookID(context)
            guard let count = try await self.webhookEndpoints.replayFailed(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            context.logger.info(
                "Webhook deliveries replayed",
                metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())", "livecast.count": "\(count)"]
            )
            return try .json(WebhookReplayBody(replayed: count), status: .accepted)
        }
    }

    var webhookEndpoints: WebhookEndpoints { WebhookEndpoints(client: self.database, logger: self.logger) }

    /// The master key that seals webhook secrets. - Throws: ``APIError`` `409 master_key_required` without one.
    private func webhookMasterKey() throws -> MasterKey {
        guard let masterKey = self.configuration.masterKey else {
            throw APIError(
                .conflict,
                code: "master_key_required",
                "webhook secrets are sealed with the master key, and this server has none: start it with --master-key-file (LIVECAST_MASTER_KEY_FILE)"
            )
        }
        return masterKey
    }

    /// The `webhookId` path parameter. - Throws: ``APIError`` 404 unless it is a UUID: no webhook is named so.
    private static func webhookID(_ context: APIRequestContext) throws -> UUID {
        let text = context.parameters.get("webhookId") ?? ""
        guard let id = UUID(uuidString: text) else { throw APIError.notFound("no webhook \(text.prefix(64))", field: "webhookId") }
        return id
    }

    private static func noWebhook(_ id: UUID) -> APIError {
        APIError.notFound("no webhook \(id.uuidString.lowercased())", field: "webhookId")
    }
}

/// `POST /v1/apps/{bundleId}/webhooks`.
private struct CreateWebhookBody: Decodable {
    let url: String
    /// The event types wanted; absent or empty: every type.
    let events: [String]?
}

/// `PATCH /v1/apps/{bundleId}/webhooks/{webhookId}`: what is given changes, the rest stays.
private struct UpdateWebhookBody: Decodable {
    let enabled: Bool?
    let events: [String]?
    let url: String?
}

/// An endpoint with its secret: the creation's and the rotation's answer, the only times the secret is shown.
private struct WebhookSecretBody: Encodable {
    let endpoint: WebhookEndpoint
    let secret: String

    private enum CodingKeys: String, CodingKey {
        case secret
    }

    func encode(to encoder: any Encoder) throws {
        try self.endpoint.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.secret, forKey: .secret)
    }
}

/// `GET /v1/apps/{bundleId}/webhooks`.
private struct WebhookListBody: Encodable {
    let webhooks: [WebhookEndpoint]
}

/// `POST …/failed:replay`.
private struct WebhookReplayBody: Encodable {
    /// How many deliveries are owed again.
    let replayed: Int
}
