import APNs
import Metrics

/// What the dispatcher reports through swift-metrics (`livecast serve` exports it to Prometheus):
/// `livecast_pushes_total{target, outcome, reason}`, `livecast_apns_request_duration_seconds`,
/// `livecast_tokens_invalidated_total{kind}` and `livecast_fanout_targets_total` (followers and audience members
/// handled: its rate is a fan-out's progress).
enum DispatchMetrics {
    private static let latency = Timer(label: "livecast_apns_request_duration_seconds", preferredDisplayUnit: .seconds)
    private static let fanOutTargets = Counter(label: "livecast_fanout_targets_total")

    /// Counts outcomes by target kind (`device`, `channel`), classification and reason, and records APNs' latency.
    static func record(_ outcomes: [APNsOutcome], target: String) {
        var counts: [String: (outcome: String, reason: String, count: Int)] = [:]
        for outcome in outcomes {
            let reason = outcome.reason?.rawValue ?? outcome.transportError.map { "transport:\($0.code.rawValue)" } ?? ""
            counts["\(outcome.classification.rawValue) \(reason)", default: (outcome.classification.rawValue, reason, 0)].count += 1
            if let latency = outcome.latency {
                Self.latency.recordNanoseconds(latency.components.seconds * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
            }
        }
        for (outcome, reason, count) in counts.values {
            Counter(label: "livecast_pushes_total", dimensions: [("target", target), ("outcome", outcome), ("reason", reason)]).increment(by: count)
        }
    }

    /// Counts tokens invalidated by APNs' verdicts.
    static func tokensInvalidated(_ count: Int, kind: String) {
        guard count > 0 else { return }
        Counter(label: "livecast_tokens_invalidated_total", dimensions: [("kind", kind)]).increment(by: count)
    }

    /// Counts followers (or audience members) a fan-out handled.
    static func fanOutProgress(_ targets: Int) {
        Self.fanOutTargets.increment(by: targets)
    }
}
