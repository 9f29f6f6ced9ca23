import APNs
import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// Sends the outbox: claims due updates with `FOR UPDATE SKIP LOCKED` under a lease, sends them over the app's
/// APNs client, and records the outcomes.
///
/// A feed's update is one row: its channel gets one broadcast, and its token-based followers are walked in keyset
/// order in pages, each page checkpointed, so memory stays flat and a crash resumes from the last checkpoint. A
/// standalone activity's updates are claimed in batches. A target's updates go out one at a time, oldest first, so
/// the timestamps it receives increase.
///
/// Several dispatchers may run at once, in one process or many. A claim names its dispatcher; when a dispatcher
/// dies, its lease runs out and another takes the row over from its checkpoint, and the dead one's late
/// checkpoints are refused.
public struct Dispatcher: Sendable {
    /// The APNs client and bundle id of an app.
    public typealias ClientForApp = @Sendable (Int64) async throws -> (client: APNsClient, bundleID: String)

    /// How a dispatcher works.
    public struct Settings: Sendable {
        /// Standalone activity updates claimed at once. Defaults to 500.
        public var batchSize: Int
        /// Followers read and sent per checkpoint. Defaults to 5,000.
        public var pageSize: Int
        /// How long a claim holds without a checkpoint before another dispatcher may take it. Defaults to 60 s.
        public var leaseSeconds: Double
        /// Rounds of resending a page's pushes that APNs asked to retry later, with backoff, before they count as
        /// failed. Defaults to 3.
        public var retryRounds: Int
        /// The first backoff between those rounds, doubled each round, with ±20 % jitter. Defaults to 1 s.
        public var retryBackoff: Duration
        /// Claims of a fan-out in a row without a checkpoint (its dispatcher died, or APNs kept asking to retry the
        /// broadcast) before it is marked failed, so the feed's later updates go on. Defaults to 8.
        public var fanOutAttempts: Int
        /// Tries of a standalone activity's update that APNs keeps asking to retry later (backing off 2, 4, 8 … s)
        /// before it is marked failed. Defaults to 8.
        public var activityAttempts: Int

        public init(
            batchSize: Int = 500,
            pageSize: Int = 5000,
            leaseSeconds: Double = 60,
            retryRounds: Int = 3,
            retryBackoff: Duration = .seconds(1),
            fanOutAttempts: Int = 8,
            activityAttempts: Int = 8
        ) {
            self.batchSize = batchSize
            self.pageSize = pageSize
            self.leaseSeconds = leaseSeconds
            self.retryRounds = retryRounds
            self.retryBackoff = retryBackoff
            self.fanOutAttempts = fanOutAttempts
            self.activityAttempts = activityAttempts
        }
    }

    /// This dispatcher's name in its claims.
    public let id = UUID()
    let database: PostgresClient
    let clientForApp: ClientForApp
    let settings: Settings
    let logger: Logger

    public init(database: PostgresClient, clientForApp: @escaping ClientForApp, settings: Settings = Settings(), logger: Logger) {
        self.database = database
        self.clientForApp = clientForApp
        self.settings = settings
        self.logger = logger
    }

    /// Claims and sends one piece of work: a feed's fan-out (to its end, unless the claim is lost), or else one
    /// batch of standalone activity updates.
    /// - Returns: How many updates it handled (0 when none were due).
    public func dispatchOnce() async throws -> Int {
        if let fanOut = try await self.claimFanOut() {
            try await self.run(fanOut)
            return 1
        }
        return try await self.dispatchActivityBatch()
    }

    /// Dispatches until nothing is due. - Returns: how many updates it handled.
    @discardableResult
    public func drain() async throws -> Int {
        var handled = 0
        while true {
            let count = try await self.dispatchOnce()
            guard count > 0 else { return handled }
            handled += count
        }
    }
}
