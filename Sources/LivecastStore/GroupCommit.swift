import Synchronization

/// Writes what arrives together in shared transactions (group commit): under load, PostgreSQL runs a few statements
/// and commits once for many writes instead of once for each.
///
/// A submission that finds fewer than ``concurrentWrites`` writes in flight starts one at once, so a lone
/// submission waits for nothing; those that arrive meanwhile wait and go together in the next, up to
/// ``maximumBatch`` at a time. Each caller gets its own item's result or error from `write`.
final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    /// Writes one batch, answering each item in order.
    typealias Write = @Sendable ([Item]) async -> [Result<Output, any Error>]

    private typealias Waiter = (item: Item, continuation: CheckedContinuation<Output, any Error>)

    private struct State: ~Copyable {
        var waiting: [Waiter] = []
        var writers = 0
    }

    /// The most items one write takes.
    let maximumBatch: Int
    /// How many batches may be written at the same time.
    let concurrentWrites: Int
    private let write: Write
    private let state = Mutex(State())

    init(maximumBatch: Int, concurrentWrites: Int, write: @escaping Write) {
        precondition(maximumBatch > 0 && concurrentWrites > 0)
        self.maximumBatch = maximumBatch
        self.concurrentWrites = concurrentWrites
        self.write = write
    }

    /// Writes `item` with whatever else is waiting.
    /// - Returns: What `write` answered for it; throws its error.
    func submit(_ item: Item) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            let startsWriter = self.state.withLock { state in
                state.waiting.append((item, continuation))
                guard state.writers < self.concurrentWrites else { return false }
                state.writers += 1
                return true
            }
            if startsWriter { Task { await self.writeWhileWaiting() } }
        }
    }

    /// Writes batches until nobody waits.
    private func writeWhileWaiting() async {
        while true {
            let batch: [Waiter] = self.state.withLock { state in
                let batch = Array(state.waiting.prefix(self.maximumBatch))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.writers -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = await self.write(batch.map(\.item))
            for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
        }
    }
}
