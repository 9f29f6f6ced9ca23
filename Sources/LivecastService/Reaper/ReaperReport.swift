/// What one reaper pass did (or, in a dry run, would do) for one app.
package struct ReaperReport: Sendable, Hashable {
    package var bundleID: String
    package var environment: String
    /// Activities ended: stale, nearing the 8-hour limit (a feed's followers ended with their feed are not counted).
    package var endedActivities = 0
    /// Feeds ended because they went stale.
    package var endedFeeds = 0
    /// Ended activities marked dismissed, their update tokens forgotten.
    package var dismissedActivities = 0
    /// Channels of ended feeds deleted at APNs and retired.
    package var retiredChannels = 0
    /// Push-to-start tokens expired.
    package var expiredTokens = 0
    /// Rows deleted by the retention periods: updates, deliveries, dismissed activities.
    package var prunedRows = 0
    /// Feed followers whose renewal was planned (or found impossible: no push-to-start token).
    package var plannedRenewals = 0
    /// Whether another reaper was working on the app, so this pass left it alone.
    package var skipped = false
    /// What failed; the other rules still ran.
    package var failures: [String] = []

    package init(bundleID: String, environment: String) {
        self.bundleID = bundleID
        self.environment = environment
    }

    /// Whether the pass found nothing to do.
    package var isEmpty: Bool {
        self.endedActivities + self.endedFeeds + self.dismissedActivities + self.retiredChannels + self.expiredTokens + self.prunedRows
            + self.plannedRenewals == 0
    }

    /// One line: `com.example.game (sandbox): ended 3 activities, 1 feeds; dismissed 2 activities; retired 1 channels;
    /// expired 4 tokens; pruned 120 rows`, then `; planned 5 renewals` when there are any, each verb as `would end` in a
    /// dry run.
    package func summary(dryRun: Bool) -> String {
        let app = "\(self.bundleID) (\(self.environment))"
        if self.skipped { return "\(app): skipped, another reaper is working on it" }
        let past =
            dryRun
            ? ["would end", "would dismiss", "would retire", "would expire", "would prune"]
            : ["ended", "dismissed", "retired", "expired", "pruned"]
        let renewals = self.plannedRenewals == 0 ? "" : "; \(dryRun ? "would plan" : "planned") \(self.plannedRenewals) renewals"
        return "\(app): \(past[0]) \(self.endedActivities) activities, \(self.endedFeeds) feeds; \(past[1]) \(self.dismissedActivities) activities; "
            + "\(past[2]) \(self.retiredChannels) channels; \(past[3]) \(self.expiredTokens) tokens; \(past[4]) \(self.prunedRows) rows\(renewals)"
    }
}
