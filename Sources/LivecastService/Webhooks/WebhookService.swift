import Foundation
package import LivecastStore
package import Logging
import NIOPosix
package import PostgresNIO
import ServiceLifecycle

/// Webhook delivery as a service: a bounded number of workers, each looping over ``WebhookDeliverer/deliverOnce()``:
/// one endpoint at a time, each delivery within its timeout, so a slow or failing endpoint holds one worker for at
/// most that long. One app's endpoints hold at most half of the workers (``perApp``, rounded up), so a neighbour's
/// slow receivers leave the rest to everyone else. When nothing is due a worker waits for a `NOTIFY` of new
/// deliveries, or the poll interval as a fallback (retries coming due, a missed notification); a worker that found
/// work wakes an idle one first, so the others join in. Every `gaugeInterval` it samples `livecast_webhook_pending`
/// and `livecast_webhook_oldest_pending_seconds{endpoint}`.
///
/// On graceful shutdown the workers stop claiming, a request in flight finishes (within its timeout) and is recorded,
/// and `run()` returns; a claim left by a process that died is taken over once its lease runs out.
package struct WebhookService: Service {
    private let database: PostgresClient
    private let masterKey: MasterKey?
    private let settings: WebhookDeliverer.Settings
    private let workers: Int
    private let pollInterval: Duration
    private let gaugeInterval: Duration
    private let logger: Logger
    private let pool: WorkerPool

    /// How many workers wait for work now: all of them once their rounds found nothing due.
    package var waitingWorkers: Int { self.pool.waiting.value }

    /// The most workers delivering to one app's endpoints at once: half of them, rounded up.
    package var perApp: Int { (self.workers + 1) / 2 }

    /// - Parameters:
    ///   - masterKey: Opens the endpoints' secrets.
    ///   - settings: How each worker claims, sends and retries.
    ///   - workers: How many endpoints are delivered to at once. Defaults to 4.
    ///   - pollInterval: How long an idle worker waits, without a notification, before it looks again. Defaults to 1
    ///     second.
    ///   - gaugeInterval: How often the backlog gauges are sampled. Defaults to 15 seconds.
    package init(
        database: PostgresClient,
        masterKey: MasterKey?,
        settings: WebhookDeliverer.Settings = .init(),
        workers: Int = 4,
        pollInterval: Duration = .seconds(1),
        gaugeInterval: Duration = .seconds(15),
        logger: Logger
    ) {
        self.database = database
        self.masterKey = masterKey
        self.settings = settings
        self.workers = max(workers, 1)
        self.pollInterval = pollInterval
        self.gaugeInterval = gaugeInterval
        self.logger = logger
        self.pool = WorkerPool(waiting: WaitingCount(), logger: logger)
    }

    package func run() async throws {
        let sender = WebhookSender(timeout: self.settings.timeout, allowPrivate: self.settings.allowPrivate)
        // One name for this process's workers: an endpoint is claimed by one of them at a time all the same, since a
        // claimed endpoint is not due again until its claim is released or its lease runs out.
        let deliverer = WebhookDeliverer(
            database: self.database,
            masterKey: self.masterKey,
            sender: sender,
            settings: self.settings,
            perApp: self.perApp,
            logger: self.logger
        )
        let wake = WakeSignal()
        let companions: [@Sendable () async -> Void] = [{ await self.sampleGauges(deliverer.deliveries) }, { await self.listen(wake) }]
        // A request in flight finishes (within its timeout) on graceful shutdown and is recorded.
        await self.pool.run(workers: self.workers, companions: companions) { _ in
            await self.pool.loop(
                wake: wake,
                failure: "webhook delivery failed; trying again",
                idleWait: { self.pollInterval },
                // A worker that found work wakes an idle one first, so the others join in.
                afterWork: { wake.signal() },
                round: { try await deliverer.deliverOnce() }
            )
        }
        try? await sender.shutdown()
    }

    /// Wakes a worker at each notification of new deliveries; while the `LISTEN` connection is lost, the workers poll.
    private func listen(_ wake: WakeSignal) async {
        await listenForNotifications(
            on: WebhookDeliveries.notificationChannel,
            database: self.database,
            retryAfter: self.pollInterval,
            logger: self.logger,
            what: "webhook"
        ) { _ in wake.signal() }
    }

    /// Records the backlog gauges every `gaugeInterval`; an endpoint whose backlog is gone is recorded as 0 once.
    private func sampleGauges(_ deliveries: WebhookDeliveries) async {
        var recorded: Set<UUID> = []
        await periodically(every: self.gaugeInterval) {
            do {
                let backlog = try await deliveries.backlog()
                WebhookMetrics.pending(backlog.reduce(0) { $0 + $1.pending })
                for endpoint in backlog { WebhookMetrics.oldestPending(endpoint.oldestAge, endpoint: endpoint.endpointID.uuidString.lowercased()) }
                let current = Set(backlog.map(\.endpointID))
                for drained in recorded.subtracting(current) { WebhookMetrics.oldestPending(0, endpoint: drained.uuidString.lowercased()) }
                recorded = current
            } catch {
                self.logger.warning("could not sample the webhook gauges", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}
