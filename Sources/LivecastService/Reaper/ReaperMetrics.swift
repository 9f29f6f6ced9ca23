import Foundation
import Metrics

/// The reaper's metrics, through whatever `MetricsSystem` the process bootstrapped (Prometheus in `serve`):
/// `livecast_reaper_last_run_timestamp_seconds` and `livecast_reaper_actions_total{action}`.
enum ReaperMetrics {
    /// Counts what a pass did for one app, by action.
    static func record(_ report: ReaperReport) {
        let actions = [
            ("end_activity", report.endedActivities),
            ("end_feed", report.endedFeeds),
            ("dismiss_activity", report.dismissedActivities),
            ("retire_channel", report.retiredChannels),
            ("expire_token", report.expiredTokens),
            ("prune_row", report.prunedRows),
        ]
        for (action, count) in actions where count > 0 {
            Counter(label: "livecast_reaper_actions_total", dimensions: [("action", action)]).increment(by: count)
        }
    }

    /// Records the end of a pass.
    static func recordRun(at date: Date) {
        Gauge(label: "livecast_reaper_last_run_timestamp_seconds").record(date.timeIntervalSince1970)
    }
}
