import LivecastStore

/// The renewal rules: planning each renewing feed's followers' renewals ahead of the activity lifetime, and ending
/// the activities renewals replaced whose end their successor's registration did not bring (a crash between the two).
extension Reaper {
    /// Plans the renewals that fall due before the next passes (``ReaperPolicy/renewalHorizon``).
    func planRenewals(_ app: Reaping.App, dryRun: Bool) async throws -> Int {
        try await self.reaping.planRenewals(
            app.id,
            activityLifetime: self.policy.activityLifetime,
            horizon: self.policy.renewalHorizon,
            self.run(dryRun: dryRun)
        )
    }

    /// Ends, through the outbox, the token-based activities renewals replaced whose successor can be updated now.
    func endRenewedActivities(_ app: Reaping.App) async throws -> Int {
        var ended = 0
        var after: Int64 = 0
        while true {
            let page = try await self.reaping.renewedActivities(app.id, after: after, limit: self.policy.batchSize)
            for (id, key) in page {
                after = id
                if try await RenewalEnds(database: self.database, logger: self.logger).end(key, appID: app.id) { ended += 1 }
            }
            if page.count < self.policy.batchSize { return ended }
        }
    }
}
