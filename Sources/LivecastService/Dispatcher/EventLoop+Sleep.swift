import NIOCore
import Synchronization

extension EventLoop {
    /// Suspends for `duration` on one of this loop's timers, like `Task.sleep(for:)`.
    ///
    /// `Task.sleep` sets a libdispatch timer, which its manager thread fires and then hands the task back to the
    /// event loops, and a cancelled sleep leaves its timer set until it is due. The dispatcher sleeps in every round
    /// (its heartbeat) and every wait for work, a hundred times a second or more under a steady stream of updates;
    /// a loop's timer is set and cancelled on the loop itself.
    /// - Throws: `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws {
        let timer = Mutex<(scheduled: Scheduled<Void>?, isCancelled: Bool)>((nil, false))
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let scheduled = self.scheduleTask(in: TimeAmount(duration)) {}
                scheduled.futureResult.whenComplete { result in
                    continuation.resume(with: result.mapError { _ in CancellationError() })
                }
                let isCancelled = timer.withLock { timer in
                    timer.scheduled = scheduled
                    return timer.isCancelled
                }
                if isCancelled { scheduled.cancel() }
            }
        } onCancel: {
            let scheduled = timer.withLock { timer in
                timer.isCancelled = true
                return timer.scheduled
            }
            scheduled?.cancel()
        }
    }
}
