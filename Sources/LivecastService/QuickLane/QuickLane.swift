import APNs
import LivecastStore
import Logging
import PostgresNIO

/// The quick lane: standalone activity updates, owed pushes and queued starts, claimed in batches per app and sent
/// the apps side by side, so they never wait behind a feed's fan-out.
struct QuickLane: Sendable {
    let tools: LaneTools
    /// Standalone activity updates (and owed pushes, and queued starts) claimed at once per app.
    let batchSize: Int
    /// The push-to-start budget each device is kept within.
    let startBudget: StartBudget
    /// How long an activity stays active: a renewal after it is too late.
    let activityLifetime: Duration

    /// Claims each app's due standalone activity updates and owed pushes, and sends them, the apps side by side:
    /// one app's slow APNs answers or broken key delays no other app. An app whose signing key cannot be opened
    /// gets its work back after a minute, until the deadline.
    /// - Parameter claims: The round's claims, which its heartbeat renews: what this claims is added.
    /// - Returns: How many updates and owed pushes it handled.
    func dispatch(holding claims: RoundClaims) async throws -> Int {
        let claimedUpdates = try await self.tools.outbox.claimActivityUpdates(batchSize: self.batchSize)
        claims.hold(updates: claimedUpdates.map(\.updateID))
        let claimedOwed = try await self.tools.outbox.claimOwedPushes(batchSize: self.batchSize)
        claims.hold(owedPushes: claimedOwed.map(\.id))
        let claimedStarts = try await self.tools.outbox.claimQueuedStarts(batchSize: self.batchSize, activityLifetime: self.activityLifetime)
        claims.hold(queuedStarts: claimedStarts.map(\.id))
        let updates = Dictionary(grouping: claimedUpdates, by: \.appID)
        let owed = Dictionary(grouping: claimedOwed, by: \.appID)
        let starts = Dictionary(grouping: claimedStarts, by: \.appID)
        let apps = Set(updates.keys).union(owed.keys).union(starts.keys)
        guard !apps.isEmpty else { return 0 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for appID in apps {
                group.addTask {
                    try await self.sendQuickWork(appID: appID, updates: updates[appID] ?? [], owed: owed[appID] ?? [], starts: starts[appID] ?? [])
                }
            }
            try await group.waitForAll()
        }
        return claimedUpdates.count + claimedOwed.count + claimedStarts.count
    }

    private func sendQuickWork(appID: Int64, updates: [ActivityClaim], owed: [OwedClaim], starts: [QueuedStartClaim]) async throws {
        let app: AppClient
        do {
            app = try await self.tools.appClients.client(forApp: appID)
        } catch let error as StoreError {
            self.tools.logger.error("cannot send an app's updates", metadata: ["app": "\(appID)", "error": "\(error)"])
            if !updates.isEmpty { try await self.holdBack(updates, reason: AppClients.unusableKeyReason) }
            try await self.holdBack(owed, reason: AppClients.unusableKeyReason)
            try await self.holdBack(starts, reason: AppClients.unusableKeyReason)
            return
        }
        if !updates.isEmpty { try await self.sendActivityUpdates(updates, appID: appID, app: app) }
        if !owed.isEmpty { try await self.sendOwed(owed, appID: appID, app: app) }
        if !starts.isEmpty { try await self.sendQueuedStarts(starts, appID: appID, app: app) }
    }
}
