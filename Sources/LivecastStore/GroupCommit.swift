import Synchronization

/// Writes what arrives together in shared transactions (group commit): under load, PostgreSQL runs a few statements
/// and commits once for many writes instead of once for each.
///
/// A submission that finds no write in flight starts one at once, so a lone submission waits for nothing; those
/// that arrive meanwhile wait for it to finish and go together in the next, up to ``maximumBatch`` at a time. One
/// write at a time: with two or four in flight, activity updates waited for each other (their activities' locks,
/// the outbox's `NOTIFY` at commit) and 1,000 a second waited longer than with one (docs/PERFORMANCE.md), and
/// registrations went no faster. Each caller gets its own item's result or error from `write`. A caller whose
/// task is cancelled while its item still waits withdraws it (`CancellationError`): it is never written.
final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes one batch, answering each item in order.
    typealias Write = @Sendable ([Item]) async -> [Result<Output, any Error>]

    private typealias Waiter = (ticket: Int, item: Item, continuation: CheckedContinuation<Output, any Error>)

    private struct State: ~Copyable {
        var waiting: [Waiter] = []
        var isWriting = false
    }

    /// The most items one write takes.
    let maximumBatch: Int
    private let write: Write
    private let state = Mutex(State())
    /// Names each submission, so that a cancelled one can be found in the queue.
    private let tickets = Atomic<Int>(0)

    init(maximumBatch: Int, write: @escaping Write) {
        precondition(maximumBatch > 0)
        self.maximumBatch = maximumBatch
        self.write = write
    }

    /// Writes `item` with whatever else is waiting.
    /// - Returns: What `write` answered for it; throws its error, or `CancellationError` when the task was cancelled
    ///   before its item was taken into a write.
    func submit(_ item: Item) async throws -> Output {
        let ticket = self.tickets.wrappingAdd(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // `nil`: cancelled already (a cancellation from now on withdraws the item once it waits).
                let startsWriting: Bool? = self.state.withLock { state in
                    guard !Task.isCancelled else { return nil }
                    state.waiting.append((ticket, item, continuation))
                    guard !state.isWriting else { return false }
                    state.isWriting = true
                    return true
                }
                switch startsWriting {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: Task { await self.writeWhileWaiting() }
                case false?: break
                }
            }
        } onCancel: {
            self.withdraw(ticket)
        }
    }

    /// Takes an item out of the queue if it still waits, answering `CancellationError`.
    private func withdraw(_ ticket: Int) {
        let withdrawn: Waiter? = self.state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            return state.waiting.remove(at: index)
        }
        withdrawn?.continuation.resume(throwing: CancellationError())
    }

    /// Writes batches until nobody waits.
    private func writeWhileWaiting() async {
        while true {
            let batch: [Waiter] = self.state.withLock { state in
                let batch = Array(state.waiting.prefix(self.maximumBatch))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.isWriting = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = await self.write(batch.map(\.item))
            for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
        }
    }
}
