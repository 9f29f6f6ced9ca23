import LivecastStore
import Logging
import NIOPosix
package import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Dispatcher workers as a service: each loops claiming and sending work; when none is due it waits for a
/// `NOTIFY` from an accepted update, or the poll interval as a fallback (a missed notification costs at most that).
/// With two workers or more, the first takes only quick work (standalone activity updates and owed pushes), so
/// those never wait behind fan-outs.
///
/// After a quick round that found work, the next one starts no sooner than `quickRoundSpacing` after it began. Under
/// a steady stream of updates each round then carries more of them: back-to-back rounds carried only a few each
/// (docs/PERFORMANCE.md), and every round costs PostgreSQL the same few statements, planned each time, on a
/// machine the API shares. A round that found nothing does not hold back the next, so after a pause an update goes
/// at once.
///
/// On graceful shutdown the workers stop claiming, a fan-out in progress stops at its next checkpoint and goes back
/// to the outbox for the next dispatcher, and `run()` returns.
package struct DispatcherService: Service {
    private let dispatcher: Dispatcher
    private let database: PostgresClient
    private let workers: Int
    private let pollInterval: Duration
    private let quickRoundSpacing: Duration
    private let logger: Logger
    private let running = RunningFlag()
    private let pool: WorkerPool

    /// Whether the workers are running (for a readiness check).
    package var isRunning: Bool { self.running.value }

    /// How many workers wait for work now: all of them once their rounds found nothing due.
    package var waitingWorkers: Int { self.pool.waiting.value }

    /// - Parameters:
    ///   - dispatcher: What claims and sends.
    ///   - database: Where the `LISTEN` connection comes from.
    ///   - workers: How many claims run at once. Defaults to 4.
    ///   - pollInterval: The longest a worker waits without a notification. Defaults to 1 second.
    ///   - quickRoundSpacing: The least time from the start of a quick round that found work to the start of the
    ///     next. Defaults to 10 ms.
    package init(
        dispatcher: Dispatcher,
        database: PostgresClient,
        workers: Int = 4,
        pollInterval: Duration = .seconds(1),
        quickRoundSpacing: Duration = .milliseconds(10),
        logger: Logger
    ) {
        self.dispatcher = dispatcher
        self.database = database
        self.workers = max(workers, 1)
        self.pollInterval = pollInterval
        self.quickRoundSpacing = quickRoundSpacing
        self.logger = logger
        self.pool = WorkerPool(waiting: WaitingCount(), logger: logger)
    }

    package func run() async throws {
        self.running.set(true)
        defer { self.running.set(false) }
        // One signal per lane: a notification of activity updates wakes the worker that takes quick work, one of feed
        // updates a worker that takes fan-outs. A single worker takes both.
        let anyWork = WakeSignal()
        let lanes = (quick: self.workers > 1 ? WakeSignal() : anyWork, any: anyWork)
        // A fan-out in hand stops at its next checkpoint on graceful shutdown.
        await self.pool.run(workers: self.workers, companions: [{ await self.listen(lanes) }]) { worker in
            let lane: Dispatcher.Lane = worker == 0 && self.workers > 1 ? .quick : .any
            await self.work(lane == .quick ? lanes.quick : lanes.any, lane: lane)
        }
    }

    private func work(_ wake: WakeSignal, lane: Dispatcher.Lane) async {
        let spacing = lane == .quick ? self.quickRoundSpacing : .zero
        var started = ContinuousClock.now
        await self.pool.loop(
            wake: wake,
            failure: "dispatching failed; trying again",
            // A worker that takes quick work wakes when this process's earliest owed push is due, if that is sooner.
            idleWait: { lane == .quick || self.workers == 1 ? self.dispatcher.owedDue.wait(atMost: self.pollInterval) : self.pollInterval },
            afterWork: { await Self.pause(until: started + spacing) },
            round: {
                started = ContinuousClock.now
                // Holding a fan-out, it wakes another worker of its lane to look for more.
                return try await self.dispatcher.dispatchOnce(lane: lane, whenClaimedFanOut: wake.signal) > 0
            }
        )
    }

    /// Waits until `instant` on an event loop's timer, unless it has passed or the service is stopping.
    private static func pause(until instant: ContinuousClock.Instant) async {
        let wait = instant - .now
        guard wait > .zero else { return }
        await cancelWhenGracefulShutdown { try? await MultiThreadedEventLoopGroup.singleton.any().sleep(for: wait) }
    }

    /// Holds a connection listening for new work, and takes another if it is lost.
    private func listen(_ lanes: (quick: WakeSignal, any: WakeSignal)) async {
        await listenForNotifications(
            on: OutboxNotification.channel,
            database: self.database,
            retryAfter: self.pollInterval,
            logger: self.logger,
            what: "outbox"
        ) { payload in
            switch OutboxNotification.Payload(payload) {
            case .due(.activity)?: lanes.quick.signal()
            case .due(.feed)?: lanes.any.signal()
            case .held(.activity, let dueIn)?: lanes.quick.signal(after: dueIn)
            case .held(.feed, let dueIn)?: lanes.any.signal(after: dueIn)
            case nil:
                lanes.quick.signal()
                lanes.any.signal()
            }
        }
    }
}

/// A flag shared by the copies of a service value.
private final class RunningFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var value: Bool { self.flag.load(ordering: .relaxed) }
    func set(_ value: Bool) { self.flag.store(value, ordering: .relaxed) }
}
