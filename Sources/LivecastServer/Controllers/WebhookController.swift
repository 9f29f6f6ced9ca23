import Foundation
import Hummingbird
import LivecastStore
import Logging

/// The app's webhook endpoints (operator): `POST`/`GET /v1/apps/{bundleId}/webhooks`, `GET`/`PATCH`/`DELETE
/// …/webhooks/{webhookId}`, `POST …/{webhookId}/secret:rotate`, `GET …/{webhookId}/failed` and `POST
/// …/{webhookId}/failed:replay`. The secret is shown only by the creation and the rotation; both need the master key
/// (`409 master_key_required` without one).
struct WebhookController: APIController {
    let endpoints: WebhookEndpoints
    /// Seals the endpoints' secrets; `nil` when the server has none.
    let masterKey: MasterKey?
    /// Whether an endpoint's URL may name a private or local address (``WebhookURL``).
    let allowPrivate: Bool

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/webhooks", role: .operator) { request, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let body = try await request.decodeJSON(as: CreateWebhookBody.self, context: context)
            let url = try WebhookURL(body.url, allowPrivate: self.allowPrivate)
            let events = try EventType.parse(body.events ?? [], field: "events")
            let masterKey = try self.sealingKey()
            let (endpoint, secret) = try await endpoints.create(appID: scope.appID, url: url, events: events, masterKey: masterKey)
            context.logger.info("Webhook endpoint created", metadata: ["livecast.webhook_id": "\(endpoint.id.uuidString.lowercased())"])
            return EditedResponse(status: .created, response: WebhookSecretBody(endpoint: endpoint, secret: secret.text))
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks", role: .operator) { _, context, scope in
            WebhookListBody(webhooks: try await self.endpoints.logging(to: context.logger).list(appID: scope.appID))
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { _, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            guard let endpoint = try await endpoints.endpoint(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            return endpoint
        }
        routes.app(.patch, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { request, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            let body = try await request.decodeJSON(as: UpdateWebhookBody.self, context: context)
            let changes = WebhookEndpoints.Changes(
                enabled: body.enabled,
                events: try body.events.map { names throws(StoreError) in try EventType.parse(names, field: "events") },
                url: try body.url.map { text throws(StoreError) in try WebhookURL(text, allowPrivate: self.allowPrivate) }
            )
            guard let endpoint = try await endpoints.update(appID: scope.appID, id: id, changes: changes) else {
                throw Self.noWebhook(id)
            }
            return endpoint
        }
        routes.app(.delete, "/v1/apps/{bundleId}/webhooks/{webhookId}", role: .operator) { _, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            guard try await endpoints.delete(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            context.logger.info("Webhook endpoint removed", metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())"])
            return Response(status: .noContent)
        }
        routes.app(.post, "/v1/apps/{bundleId}/webhooks/{webhookId}/secret:rotate", role: .operator) { _, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            let masterKey = try self.sealingKey()
            guard let rotated = try await endpoints.rotateSecret(appID: scope.appID, id: id, masterKey: masterKey) else {
                throw Self.noWebhook(id)
            }
            context.logger.info("Webhook secret rotated", metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())"])
            return WebhookSecretBody(endpoint: rotated.endpoint, secret: rotated.secret.text)
        }
        routes.app(.get, "/v1/apps/{bundleId}/webhooks/{webhookId}/failed", role: .operator) { request, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            let parameters = request.uri.queryParameters
            let limit = try parameters.pageLimit()
            let after = try parameters.integer("after", in: 0...Int64.max)
            guard
                let deliveries = try await endpoints.failedDeliveries(appID: scope.appID, id: id, after: after, limit: limit + 1)
            else { throw Self.noWebhook(id) }
            return PageBody("deliveries", deliveries, limit: limit) { $0.id }
        }
        routes.app(.post, "/v1/apps/{bundleId}/webhooks/{webhookId}/failed:replay", role: .operator) { _, context, scope in
            let endpoints = self.endpoints.logging(to: context.logger)
            let id = try Self.webhookID(context)
            guard let count = try await endpoints.replayFailed(appID: scope.appID, id: id) else { throw Self.noWebhook(id) }
            context.logger.info(
                "Webhook deliveries replayed",
                metadata: ["livecast.webhook_id": "\(id.uuidString.lowercased())", "livecast.count": "\(count)"]
            )
            return EditedResponse(status: .accepted, response: WebhookReplayBody(replayed: count))
        }
    }

    /// The master key that seals webhook secrets. - Throws: ``APIError`` `409 master_key_required` without one.
    private func sealingKey() throws -> MasterKey {
        guard let masterKey = self.masterKey else {
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
private struct WebhookSecretBody: ResponseEncodable {
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
private struct WebhookListBody: ResponseEncodable {
    let webhooks: [WebhookEndpoint]
}

/// `POST …/failed:replay`.
private struct WebhookReplayBody: ResponseEncodable {
    /// How many deliveries are owed again.
    let replayed: Int
}
