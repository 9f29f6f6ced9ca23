import Prometheus

/// The Prometheus side of Livecast's metrics.
public enum LivecastMetrics {
    /// A swift-metrics factory writing into `registry`, with names and labels made Prometheus-safe, and Hummingbird's
    /// request metrics (OpenTelemetry's dotted names) renamed into Livecast's: `livecast_http_requests_total{route,
    /// method, status}`, `livecast_http_request_duration_seconds`, …
    public static func factory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in
            (Self.renamed[name] ?? Self.sanitized(name), labels.map { (Self.renamedLabels[$0.0] ?? Self.sanitized($0.0), $0.1) })
        }
        return factory
    }

    private static let renamed = [
        "hb.requests": "livecast_http_requests_total",
        "hb.request.errors": "livecast_http_request_errors_total",
        "http.server.request.duration": "livecast_http_request_duration_seconds",
        "http.server.active_requests": "livecast_http_active_requests",
    ]

    private static let renamedLabels = [
        "http.route": "route",
        "http.request.method": "method",
        "http.response.status_code": "status",
        "error.type": "error",
    ]

    private static func sanitized(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") ? $0 : "_" })
    }
}
