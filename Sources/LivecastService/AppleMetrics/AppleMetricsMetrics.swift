import LivecastStore
import Metrics

/// What the Apple-metrics job reports through swift-metrics: `livecast_apple_exports_total{dataset, outcome}`
/// (`stored` or `failed`) and `livecast_apple_exports_failing`, the exports whose last attempt failed (alert on it).
enum AppleMetricsMetrics {
    static func export(_ dataset: AppleDataset, succeeded: Bool) {
        Counter(label: "livecast_apple_exports_total", dimensions: [("dataset", dataset.rawValue), ("outcome", succeeded ? "stored" : "failed")])
            .increment()
    }

    static func failing(_ count: Int) {
        Gauge(label: "livecast_apple_exports_failing").record(count)
    }
}
