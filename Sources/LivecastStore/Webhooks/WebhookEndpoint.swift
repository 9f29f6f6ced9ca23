package import Foundation
package import LivecastCore

/// A webhook endpoint of an app (`webhook_endpoints`), as an operator sees it: where its events go, which ones, and
/// how their delivery goes. Never its secret. It is encoded as the API shows it
/// (`GET /v1/apps/{bundleId}/webhooks/{webhookId}`).
package struct WebhookEndpoint: Sendable, Hashable, Encodable {
    package var id: UUID
    package var url: String
    /// The event types it wants; empty: every type.
    package var events: [String]
    /// A disabled endpoint is owed nothing: no delivery is made for it while it is.
    package var enabled: Bool
    package var createdAt: Date
    package var updatedAt: Date
    /// Until when the secret before the last rotation still signs deliveries, while it does.
    package var previousSecretExpiresAt: Date?
    package var delivery: Delivery

    /// How the endpoint's deliveries go.
    package struct Delivery: Sendable, Hashable, Encodable {
        /// Events owed to it.
        package var pending: Int
        /// When the oldest of them was made, if any is owed.
        package var oldestPendingAt: Date?
        /// How long the oldest has waited, in seconds.
        package var oldestPendingAgeSeconds: Int64?
        /// Events given up after 24 hours of tries, kept to be replayed.
        package var failed: Int
        /// Failed attempts since the last success.
        package var consecutiveFailures: Int
        /// When the next attempt may be made (the backoff after a failure).
        package var nextAttemptAt: Date
        package var lastSuccessAt: Date?
        package var lastFailureAt: Date?
        /// Why the last attempt failed (a status, a timeout, a refused address).
        package var lastFailure: String?
    }

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case id, url, events, enabled, createdAt, updatedAt, previousSecretExpiresAt, delivery
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id.uuidString.lowercased(), forKey: .id)
        try container.encode(self.url, forKey: .url)
        try container.encode(self.events, forKey: .events)
        try container.encode(self.enabled, forKey: .enabled)
        try container.encode(self.createdAt, forKey: .createdAt)
        try container.encode(self.updatedAt, forKey: .updatedAt)
        try container.encodeIfPresent(self.previousSecretExpiresAt, forKey: .previousSecretExpiresAt)
        try container.encode(self.delivery, forKey: .delivery)
    }
}

/// An event a webhook endpoint's delivery gave up on after 24 hours of tries (`webhook_deliveries` in state
/// `failed`), as an operator lists it to replay (`GET /v1/apps/{bundleId}/webhooks/{webhookId}/failed`).
package struct WebhookFailedDelivery: Sendable, Hashable, Encodable {
    package var id: Int64
    /// The event, as the feed and the deliveries carry it.
    package var event: JSONValue
    package var attempts: Int
    package var failedAt: Date
    package var lastError: String?
}
