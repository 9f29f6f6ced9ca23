package import Prometheus

/// The Prometheus side of Livecast's metrics.
package enum LivecastMetrics {
    /// A swift-metrics factory writing into `registry`, with names and labels made Prometheus-safe.
    package static func factory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in (Self.sanitized(name), labels.map { (Self.sanitized($0.0), $0.1) }) }
        return factory
    }

    private static func sanitized(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") ? $0 : "_" })
    }
}
