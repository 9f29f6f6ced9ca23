import Foundation
import Synchronization

/// Wakes every waiting worker at once (a `NOTIFY` arrived), or lets each wait at most a poll interval.
final class WakeSignal: Sendable {
    private let waiters = Mutex<[UUID: CheckedContinuation<Void, Never>]>([:])

    /// Wakes everyone waiting now.
    func signal() {
        let waiting = self.waiters.withLock { waiters in
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns at the next signal, after `timeout`, or when the task is cancelled, whichever comes first.
    func wait(timeout: Duration) async {
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
                let cancelled = self.waiters.withLock { waiters in
                    guard !Task.isCancelled else { return true }
                    waiters[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            self.waiters.withLock { $0.removeValue(forKey: id) }?.resume()
        }
    }
}
