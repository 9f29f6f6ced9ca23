import LivecastCore
import LivecastStore

extension Reaper {
    /// Deletes, in bounded batches, what the app's retention periods no longer keep: deliveries, finished updates
    /// (sent, superseded, failed), scheduled updates done with (sent, cancelled, refused), dismissed activities
    /// with their tokens and updates, and client devices gone for longer than the token expiry. A start of a feed that has not ended is kept: its `feed_starts` rows are what
    /// keeps a device from being started twice.
    /// - Returns: The rows deleted (or, in a dry run, that would be), cascades not counted.
    func prune(_ app: Reaping.App, now: Int, dryRun: Bool) async throws -> Int {
        func cutoff(keeping retention: Duration) -> Double { Double(now) - retention.inSeconds }
        let (run, retention) = (self.run(dryRun: dryRun), self.retention(of: app))
        var pruned = try await self.reaping.pruneDeliveries(app.id, attemptedBefore: cutoff(keeping: retention.deliveries), run)
        pruned += try await self.reaping.pruneFinishedUpdates(app.id, completedBefore: cutoff(keeping: retention.updates), run)
        pruned += try await self.reaping.pruneScheduledUpdates(app.id, doneBefore: cutoff(keeping: retention.updates), run)
        pruned += try await self.reaping.pruneDismissedActivities(app.id, dismissedBefore: cutoff(keeping: retention.dismissedActivities), run)
        pruned += try await self.reaping.pruneEvents(app.id, occurredBefore: cutoff(keeping: retention.updates), run)
        pruned += try await self.reaping.pruneClientDevices(app.id, admittedBefore: cutoff(keeping: self.policy.tokenExpiry), run)
        return pruned
    }
}
