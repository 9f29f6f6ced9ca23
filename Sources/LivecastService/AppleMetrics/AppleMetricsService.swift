import LivecastStore
import Logging
import ServiceLifecycle

/// The Apple-metrics job inside `serve`: every instance ticks; at each tick the one that takes the job's advisory
/// lock (namespace 6, held by a transaction for the tick's length) runs ``AppleMetricsJob``, the others skip. A tick
/// fetches only what is not stored yet, so ticking hourly makes the job daily and retries a failed export within the
/// hour. It works apart from sending: its failures are recorded, never thrown at the dispatcher.
package struct AppleMetricsService: Service {
    private let job: AppleMetricsJob
    private let interval: Duration

    /// - Parameter interval: The time between ticks, from the end of one to the start of the next.
    package init(job: AppleMetricsJob, interval: Duration) {
        self.job = job
        self.interval = interval
    }

    /// Waits an interval before the first tick, so a starting `serve` applies its migrations first.
    package func run() async throws {
        await periodically(every: self.interval) { await self.tick() }
    }

    /// One tick, if this instance takes the lock. - Returns: What the job did, or `nil` when it did not run here.
    @discardableResult
    package func tick() async -> AppleMetricsJob.Outcome? {
        do {
            return try await AppleMetricsExports(client: self.job.database, logger: self.job.logger).whileHoldingScheduleLock {
                do {
                    let outcome = try await self.job.run()
                    if outcome != AppleMetricsJob.Outcome() {
                        self.job.logger.info(
                            "Apple's figures fetched",
                            metadata: ["stored": "\(outcome.stored)", "failed": "\(outcome.failed)", "flagged": "\(outcome.flagged)"]
                        )
                    }
                    return outcome
                } catch {
                    self.job.logger.error("the Apple-metrics job failed", metadata: ["error": "\(error)"])
                    return AppleMetricsJob.Outcome(failed: 1)
                }
            }
        } catch {
            self.job.logger.error("the Apple-metrics job could not take its lock", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
