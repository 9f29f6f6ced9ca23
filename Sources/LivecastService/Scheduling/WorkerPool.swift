import Logging
import ServiceLifecycle

/// The skeleton a worker service runs (the dispatcher's, the webhooks'): some workers, each looping over a round of
/// work, beside companions that only serve them (a `LISTEN` connection, a gauge sampler).
///
/// A worker whose round found nothing waits for its wake signal (a `NOTIFY`) or a timeout, counted in ``waiting``
/// meanwhile; one whose round failed logs why and waits the same way. On graceful shutdown a worker finishes the
/// round in hand and stops, and the companions stop at once; ``run(workers:companions:)`` returns when the last
/// worker has stopped.
struct WorkerPool: Sendable {
    /// How many workers wait for work now.
    let waiting: WaitingCount
    let logger: Logger

    /// Runs `workers` workers (`worker(index)` each) and the companions, until graceful shutdown.
    func run(workers: Int, companions: [@Sendable () async -> Void], worker: @escaping @Sendable (Int) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for companion in companions {
                group.addTask { await cancelWhenGracefulShutdown { await companion() } }
            }
            // The workers finish what they hold on graceful shutdown; the companions stop at once, so they are waited
            // for apart from them.
            await withTaskGroup(of: Void.self) { running in
                for index in 0..<workers {
                    running.addTask { await worker(index) }
                }
            }
            group.cancelAll()
        }
    }

    /// One worker's loop: `round` until graceful shutdown; after a round that found work, `afterWork` (a pause, a
    /// signal to another worker) and the next round; otherwise a wait on `wake` of at most `idleWait()`.
    /// - Parameter failure: What the log says when a round throws (the error is added).
    func loop(
        wake: WakeSignal,
        failure: Logger.Message,
        idleWait: () -> Duration,
        afterWork: () async -> Void = {},
        round: () async throws -> Bool
    ) async {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                if try await round() {
                    await afterWork()
                    continue
                }
            } catch {
                self.logger.error(failure, metadata: ["error": "\(String(reflecting: error))"])
            }
            let timeout = idleWait()
            self.waiting.add(1)
            await cancelWhenGracefulShutdown { await wake.wait(timeout: timeout) }
            self.waiting.add(-1)
        }
    }
}
