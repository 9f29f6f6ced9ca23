import APNs
import LivecastStore
import Metrics

/// What the dispatcher reports through swift-metrics (`livecast serve` exports it to Prometheus):
/// `livecast_pushes_total{target, outcome, reason}`, `livecast_apns_request_duration_seconds`,
/// `livecast_tokens_invalidated_total{kind}` and `livecast_fanout_targets_total` (followers and audience members
/// handled: its rate is a fan-out's progress).
/// Each call looks its metrics up in the factory in use, so a test's task-local factory sees them too.
enum DispatchMetrics {

    /// Counts outcomes by target kind (`device`, `channel`), classification and reason, and records APNs' latency.
    /// Outcomes are grouped before any label is made, so a batch costs one counter update per kind of outcome.
    static func record(_ outcomes: [APNsOutcome], target: String) {
        let apnsLatency = Timer(label: "livecast_apns_request_duration_seconds", preferredDisplayUnit: .seconds)
        var groups: [OutcomeKind: (example: APNsOutcome, count: Int)] = [:]
        for outcome in outcomes {
            groups[OutcomeKind(outcome), default: (outcome, 0)].count += 1
            if let latency = outcome.latency {
                apnsLatency.recordNanoseconds(latency.components.seconds * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
            }
        }
        for (example, count) in groups.values {
            let dimensions = [("target", target), ("outcome", example.classification.description), ("reason", example.failureReason)]
            Counter(label: "livecast_pushes_total", dimensions: dimensions).increment(by: count)
        }
    }

    /// What tells outcomes apart in `livecast_pushes_total`.
    private struct OutcomeKind: Hashable {
        let classification: APNsOutcome.Classification
        let reason: String?
        let transportError: String?
        let status: Int?

        init(_ outcome: APNsOutcome) {
            self.classification = outcome.classification
            self.reason = outcome.reason?.rawValue
            self.transportError = outcome.transportError?.code.rawValue
            self.status = outcome.status
        }
    }

    /// Counts tokens invalidated by APNs' verdicts.
    static func tokensInvalidated(_ count: Int, kind: String) {
        guard count > 0 else { return }
        Counter(label: "livecast_tokens_invalidated_total", dimensions: [("kind", kind)]).increment(by: count)
    }

    /// Counts followers (or audience members) a fan-out handled.
    static func fanOutProgress(_ targets: Int) {
        Counter(label: "livecast_fanout_targets_total").increment(by: targets)
    }

    /// Counts what became of claimed queued starts, by kind (`deferred`, `renewal`) and outcome (`sent`, `dropped`,
    /// `waiting`), in `livecast_queued_starts_total`: renewals sent are the renewals done.
    static func queuedStarts(_ outcomes: [QueuedStartOutcome]) {
        var counts: [[String]: Int] = [:]
        for outcome in outcomes {
            let fate: String =
                switch outcome.fate {
                case .sent: "sent"
                case .dropped: "dropped"
                case .later, .awaitingRoom: "waiting"
                }
            counts[[outcome.claim.kind.rawValue, fate], default: 0] += 1
        }
        for (labels, count) in counts {
            Counter(label: "livecast_queued_starts_total", dimensions: [("kind", labels[0]), ("outcome", labels[1])]).increment(by: count)
        }
    }

    /// Counts a fan-out page's starts that waited for their devices' budget, in `livecast_starts_deferred_total`.
    static func startsDeferred(_ count: Int) {
        guard count > 0 else { return }
        Counter(label: "livecast_starts_deferred_total").increment(by: count)
    }
}
