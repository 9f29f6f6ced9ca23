import Foundation
import Synchronization

/// Wakes every waiting worker at once (a `NOTIFY` arrived), or lets each wait at most a poll interval. A signal
/// that comes while a worker is busy is not lost: its next wait returns at once.
final class WakeSignal: Sendable {
    private struct State {
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        /// How many signals came so far.
        var generation = 0
    }

    private let state = Mutex(State())

    /// How many signals came so far: a worker reads it before it looks for work.
    var generation: Int { self.state.withLock { $0.generation } }

    /// Wakes everyone waiting now, and any worker busy now at its next wait.
    func signal() {
        let waiting = self.state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns at the next signal, after `timeout`, or when the task is cancelled, whichever comes first; at once
    /// when a signal came since `generation`.
    func wait(timeout: Duration, since generation: Int) async {
        guard self.generation == generation else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
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
