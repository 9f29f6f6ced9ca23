import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Wakes one waiting worker (a `NOTIFY` arrived), or lets each wait at most a poll interval. A signal that comes
/// while no worker waits is not lost: the next wait returns at once.
///
/// One worker per signal, not all: under a steady stream of notifications, waking every worker made each of them
/// look for work that one of them then took. A worker that claims a fan-out signals again, so another looks for the
/// next while it runs.
final class WakeSignal: Sendable {
    private struct State {
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// A signal came while nobody waited.
        var isPending = false
        /// The slots of ``timerSlot`` that a timer of ``signal(after:)`` will signal.
        var scheduled: Set<Int> = []
    }

    private let state = Mutex(State())
    /// Where ``signal(after:)``'s slots count from.
    private let origin = ContinuousClock.now
    /// ``signal(after:)`` sets one timer for all the signals due within this span.
    static let timerSlot: Duration = .milliseconds(50)

    /// How many workers wait for a signal now.
    var waiting: Int { self.state.withLock { $0.waiters.count } }

    /// Wakes one worker waiting now, or else the next to wait.
    func signal() {
        let waiter = self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let id = state.waiters.keys.first else {
                state.isPending = true
                return nil
            }
            return state.waiters.removeValue(forKey: id)
        }
        waiter?.resume()
    }

    /// Signals once `delay` has passed, when work held until then becomes due. Many asking for about the same moment
    /// (every batch of updates held until the next second) share one timer, set on an event loop: it signals at the
    /// end of its ``timerSlot``, never before the moment asked for.
    func signal(after delay: Duration) {
        let slot = Int(((ContinuousClock.now + delay) - self.origin) / Self.timerSlot) + 1
        guard self.state.withLock({ $0.scheduled.insert(slot).inserted }) else { return }
        let firesIn = self.origin + Self.timerSlot * slot - ContinuousClock.now
        MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(firesIn)) {
            self.state.withLock { _ = $0.scheduled.remove(slot) }
            self.signal()
        }
    }

    /// Returns at a signal, after `timeout`, or when the task is cancelled, whichever comes first; at once when a
    /// signal is pending.
    func wait(timeout: Duration) async {
        let wasPending = self.state.withLock { state in
            defer { state.isPending = false }
            return state.isPending
        }
        guard !wasPending else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await MultiThreadedEventLoopGroup.singleton.any().sleep(for: timeout) }
            group.addTask { await self.nextSignal() }
            await group.next()
            group.cancelAll()
        }
    }

    private func nextSignal() async {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = self.state.withLock { state in
                    guard !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            self.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
