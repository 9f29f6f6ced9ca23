package import Foundation
package import LivecastStore
import Logging
package import PostgresNIO

/// Sends the outbox: claims due updates with `FOR UPDATE SKIP LOCKED` under a lease, sends them over the app's
/// APNs client, and records the outcomes.
///
/// A feed's update is one row: its channel gets one broadcast, and its token-based followers are walked in keyset
/// order in pages, each page checkpointed, so memory stays flat and a crash resumes from the last checkpoint. A
/// standalone activity's updates are claimed in batches, per app. A target's updates go out one at a time, oldest
/// first, so the timestamps it receives increase. A push APNs asks to retry later is carried forward with backoff
/// (an owed push, or the activity's update put back) until it is delivered, superseded or past its deadline
/// (``RetryPolicy``); then it is a dead letter.
///
/// Several dispatchers may run at once, in one process or many. A claim names its dispatcher and is kept by its
/// heartbeat; when a dispatcher dies, its lease runs out within ``Settings/lease`` and another takes the
/// row over from its checkpoint, and the dead one's late checkpoints are refused.
///
/// The dispatcher picks the lane and keeps the heartbeat; its collaborators do the sending: ``FanOutRunner`` (a
/// feed's fan-out), ``QuickLane`` (standalone activity updates and owed pushes) and ``Broadcaster`` (channels). Every
/// statement they run is the store's ``Outbox``; the retry backoff and the invalidation guard (`Policy/`) are theirs.
package struct Dispatcher: Sendable {
    /// How a dispatcher works.
    package struct Settings: Sendable {
        /// Standalone activity updates (and owed pushes) claimed at once per app. Defaults to 500.
        package var batchSize: Int
        /// Followers read and sent per checkpoint. Defaults to 2,000: with the APNs client's window of 500 requests a
        /// connection, enough to keep its streams busy, and two pages of it held at once stay small.
        package var pageSize: Int
        /// How long a claim holds without a heartbeat before another dispatcher may take it over. The heartbeat
        /// renews it every third of this. Defaults to 10 s.
        package var lease: Duration
        /// Claims of a fan-out in a row without a checkpoint (its dispatcher kept dying on it) before it is given
        /// up as a dead letter, so the feed's later updates go on. Defaults to 8.
        package var fanOutAttempts: Int
        /// How long a push APNs keeps asking to retry later (429, 5xx, connection lost) stays owed before it is
        /// given up as a dead letter; an end is kept at least while its activity can show. Defaults to one hour.
        package var retryDeadline: Duration
        /// Fan-outs of one app sent at once across all dispatchers, and slices of its fan-outs sent at once by one
        /// dispatcher, so one app's big games leave room for the others'. Defaults to 2.
        package var fanOutsPerApp: Int
        /// A feed's token-based followers per slice: a fan-out to more is split into slices that every instance's
        /// workers walk side by side (`fan-out-slice`). Defaults to 50,000.
        package var sliceSize: Int
        /// The wait before the first retry of a push APNs asked to retry later, doubled each try up to
        /// ``maximumRetryBackoff``. Defaults to 0.5 s.
        package var firstRetryBackoff: Duration
        /// The longest wait between two tries of a push APNs asks to retry later. Short, because a push still owed
        /// is the newest content its target lacks (``RetryPolicy``). Defaults to 1 s.
        package var maximumRetryBackoff: Duration
        /// The share of one batch of pushes answered `Unregistered` or `BadDeviceToken` that holds the app's
        /// sending instead of invalidating the tokens (the invalidation guard). Defaults to 0.5.
        package var invalidationGuardShare: Double
        /// The smallest batch the invalidation guard judges. Defaults to 20.
        package var invalidationGuardMinimumBatch: Int
        /// The push-to-start notifications one device is sent in a rolling window (`start-budget`,
        /// `start-budget-window`). Defaults to ``StartBudget/default``.
        package var startBudget: StartBudget = .default
        /// How long an activity stays active before the system ends it (`activity-lifetime`): a renewal is not sent
        /// after it, nor an update retried past it. Defaults to ActivityKit's 8 hours.
        package var activityLifetime: Duration = .seconds(8 * 3600)

        package init(
            batchSize: Int = 500,
            pageSize: Int = 2000,
            lease: Duration = .seconds(10),
            fanOutAttempts: Int = 8,
            retryDeadline: Duration = .seconds(3600),
            fanOutsPerApp: Int = 2,
            sliceSize: Int = 50_000,
            firstRetryBackoff: Duration = .milliseconds(500),
            maximumRetryBackoff: Duration = .seconds(1),
            invalidationGuardShare: Double = 0.5,
            invalidationGuardMinimumBatch: Int = 20
        ) {
            self.batchSize = batchSize
            self.pageSize = pageSize
            self.lease = lease
            self.fanOutAttempts = fanOutAttempts
            self.retryDeadline = retryDeadline
            self.fanOutsPerApp = fanOutsPerApp
            self.sliceSize = max(sliceSize, 1)
            self.firstRetryBackoff = firstRetryBackoff
            self.maximumRetryBackoff = max(maximumRetryBackoff, firstRetryBackoff)
            self.invalidationGuardShare = invalidationGuardShare
            self.invalidationGuardMinimumBatch = invalidationGuardMinimumBatch
        }
    }

    /// What a worker claims.
    package enum Lane: Sendable {
        /// A feed's fan-out first, else quick work.
        case any
        /// Only quick work: standalone activity updates and owed pushes, so they never wait behind a fan-out.
        case quick
    }

    /// This dispatcher's name in its claims.
    package let id: UUID
    let settings: Settings
    let outbox: Outbox
    /// When the earliest push this dispatcher owed comes due.
    let owedDue: OwedDue
    let fanOuts: FanOutRunner
    let quickLane: QuickLane
    let logger: Logger

    /// - Parameters:
    ///   - database: The pool its statements run on.
    ///   - appClients: Where each app's APNs client comes from.
    ///   - settings: How it works.
    package init(database: PostgresClient, appClients: any AppClientSource, settings: Settings = Settings(), logger: Logger) {
        self.init(database: database, appClients: appClients, settings: settings, logger: logger) { $0 }
    }

    /// A dispatcher whose fan-outs go through `driver`, made from its outbox (a test counts their round trips).
    init(
        database: PostgresClient,
        appClients: any AppClientSource,
        settings: Settings,
        logger: Logger,
        driver: (Outbox) -> any FanOutDriver
    ) {
        let id = UUID()
        let owedDue = OwedDue()
        let outbox = Outbox(
            database: database,
            claimer: id,
            lease: settings.lease,
            retryDeadline: RetryDeadline(period: settings.retryDeadline, activityLifetime: settings.activityLifetime),
            logger: logger
        )
        let recorder = PushRecorder(
            outbox: outbox,
            database: database,
            retryPolicy: RetryPolicy(firstBackoff: settings.firstRetryBackoff, maximumBackoff: settings.maximumRetryBackoff),
            owedDue: owedDue,
            logger: logger
        )
        let sender = PageSender(
            invalidationGuard: InvalidationGuard(share: settings.invalidationGuardShare, minimumBatch: settings.invalidationGuardMinimumBatch),
            credentialsProofs: CredentialsProofs(apps: Apps(client: database, masterKey: nil, logger: logger))
        )
        let tools = LaneTools(recorder: recorder, sender: sender, broadcaster: Broadcaster(outbox: outbox), appClients: appClients)
        self.id = id
        self.settings = settings
        self.outbox = outbox
        self.owedDue = owedDue
        self.logger = logger
        self.fanOuts = FanOutRunner(
            tools: tools,
            driver: driver(outbox),
            limits: FanOutLimits(pageSize: settings.pageSize, sliceSize: settings.sliceSize, startBudget: settings.startBudget),
            attempts: settings.fanOutAttempts
        )
        self.quickLane = QuickLane(
            tools: tools,
            batchSize: settings.batchSize,
            startBudget: settings.startBudget,
            activityLifetime: settings.activityLifetime
        )
    }

    /// Claims and sends one piece of work, under a heartbeat that keeps its claims: a feed's fan-out (to its end,
    /// unless the claim is lost, or until it is split into slices), else a slice of one, or else quick work: each app's due standalone activity updates and owed pushes,
    /// the apps side by side.
    /// - Parameter whenClaimedFanOut: Called once it holds a fan-out, before it runs it (another worker may look for
    ///   more).
    /// - Returns: How many updates and owed pushes it handled (0 when none were due).
    package func dispatchOnce(lane: Lane = .any, whenClaimedFanOut: @Sendable () -> Void = {}) async throws -> Int {
        let claims = RoundClaims()
        return try await self.withHeartbeat(renewing: claims) {
            if lane == .any, let fanOut = try await self.fanOuts.driver.claimFanOut(perApp: self.settings.fanOutsPerApp) {
                claims.hold(updates: [fanOut.updateID])
                whenClaimedFanOut()
                try await self.fanOuts.run(fanOut)
                return 1
            }
            if lane == .any, let slice = try await self.fanOuts.driver.claimSlice(perApp: self.settings.fanOutsPerApp) {
                if let id = slice.slice?.id { claims.hold(slice: id) }
                whenClaimedFanOut()
                try await self.fanOuts.run(slice)
                return 1
            }
            return try await self.quickLane.dispatch(holding: claims)
        }
    }

    /// Dispatches until nothing is due. - Returns: how many updates it handled.
    @discardableResult
    package func drain() async throws -> Int {
        var handled = 0
        while true {
            let count = try await self.dispatchOnce()
            guard count > 0 else { return handled }
            handled += count
        }
    }
}
