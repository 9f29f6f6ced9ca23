import Metrics

/// What webhook delivery reports through swift-metrics: `livecast_webhook_deliveries_total{outcome}` (events
/// `delivered`, a `failed_attempt` at them, or `gave_up` on after the give-up age), `livecast_webhook_pending`
/// (events owed to every endpoint) and `livecast_webhook_oldest_pending_seconds{endpoint}`.
/// Each call looks its metrics up in the factory in use, so a test's task-local factory sees them too.
enum WebhookMetrics {
    static func delivered(_ count: Int) {
        guard count > 0 else { return }
        Counter(label: "livecast_webhook_deliveries_total", dimensions: [("outcome", "delivered")]).increment(by: count)
    }

    static func failedAttempt(_ count: Int, gaveUp: Int) {
        if count > 0 {
            Counter(label: "livecast_webhook_deliveries_total", dimensions: [("outcome", "failed_attempt")]).increment(by: count)
        }
        if gaveUp > 0 {
            Counter(label: "livecast_webhook_deliveries_total", dimensions: [("outcome", "gave_up")]).increment(by: gaveUp)
        }
    }

    static func pending(_ count: Int) {
        Gauge(label: "livecast_webhook_pending").record(count)
    }

    static func oldestPending(_ seconds: Double, endpoint: String) {
        Gauge(label: "livecast_webhook_oldest_pending_seconds", dimensions: [("endpoint", endpoint)]).record(seconds)
    }
}
