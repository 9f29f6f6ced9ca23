import LivecastCore
import LivecastStore

extension Reaper {
    /// Expires live push-to-start tokens the device has not registered again for the expiry period (reason
    /// `expired`). - Returns: how many were (or, in a dry run, would be) expired.
    func expireTokens(_ app: Reaping.App, now: Int, dryRun: Bool) async throws -> Int {
        try await self.reaping.expireTokens(app.id, seenBefore: Double(now) - self.policy.tokenExpiry.inSeconds, self.run(dryRun: dryRun))
    }
}
