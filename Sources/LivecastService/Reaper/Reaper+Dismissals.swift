import LivecastStore

extension Reaper {
    /// Marks ended activities dismissed once their dismissal date passed (4 hours after the end when they have
    /// none, as ActivityKit does), and forgets their update tokens (reason `dismissed`). An activity whose end is
    /// still in the outbox waits for it.
    /// - Returns: How many were (or, in a dry run, would be) dismissed.
    func dismissActivities(_ app: Reaping.App, now: Int, dryRun: Bool) async throws -> Int {
        try await self.reaping.dismissActivities(app.id, now: now, maximumDelay: ReaperPolicy.maximumDismissalDelay, self.run(dryRun: dryRun))
    }
}
