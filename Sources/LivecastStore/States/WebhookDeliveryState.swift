import PostgresNIO

/// Where an event's delivery to a webhook endpoint stands: `webhook_deliveries.state` (a delivered one is deleted).
package enum WebhookDeliveryState: String, Sendable, CaseIterable, StoredState {
    /// Waiting for the endpoint's worker, or to be tried again.
    case pending
    /// Given up on after the give-up age of tries; a replay makes it pending again.
    case failed
}
