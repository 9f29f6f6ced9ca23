import Synchronization

/// Writes what arrives together in shared transactions (group commit): under load, PostgreSQL runs a few statements
/// and commits once for many writes instead of once for each.
///
/// A submission that finds no write in flight starts one at once, so a lone submission waits for nothing; those
/// that arrive meanwhile wait for it to finish and go together in the next, up to ``maximumBatch`` at a time. One
/// write at a time: with two or four in flight, activity updates waited for each other (their activities' locks,
/// the outbox's `NOTIFY` at commit) and 1,000 a second waited longer (p50 7.8 and 10 ms against 6.2 ms with one),
/// and registrations went no faster. Each caller gets its own item's result or error from `write`.
final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes one batch, answering each item in order.
    typealias Write = @Sendable ([Item]) async -> [Result<Output, any Error>]

    private typealias Waiter = (item: Item, continuation: CheckedContinuation<Output, any Error>)

    private struct State: ~Copyable {
        var waiting: [Waiter] = []
        var isWriting = false
    }

    /// The most items one write takes.
    let maximumBatch: Int
    private let write: Write
    private let state = Mutex(State())

    init(maximumBatch: Int, write: @escaping Write) {
        precondition(maximumBatch > 0)
        self.maximumBatch = maximumBatch
        self.write = write
    }

    /// Writes `item` with whatever else is waiting.
    /// - Returns: What `write` answered for it; throws its error.
    func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let startsWriting = self.state.withLock { state in
                state.waiting.append((item, continuation))
                guard !state.isWriting else { return false }
                state.isWriting = true
                return true
            }
            if startsWriting { Task { await self.writeWhileWaiting() } }
        }
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
