import Logging
import PostgresNIO
import Synchronization

/// Writes the push-to-start registrations that arrive together in one statement and one transaction (group commit):
/// at a launch peak, PostgreSQL commits once for many registrations instead of once for each.
///
/// A registration that finds no write in flight starts one at once, so a lone registration waits for nothing; those
/// that arrive meanwhile wait for it to finish and go together in the next, up to ``maximumBatch`` at a time. Each
/// caller gets its own registration's result or error (``PushToStartTokens/write(_:client:logger:)``).
public final class PushToStartRegistrar: Sendable {
    /// The most registrations one statement writes.
    public static let maximumBatch = 500

    private typealias Waiter = (registration: PushToStartTokens.Registration, continuation: CheckedContinuation<PushToStartTokens.Result, any Error>)

    private struct State {
        var waiting: [Waiter] = []
        var isWriting = false
    }

    private let client: PostgresClient
    private let logger: Logger
    private let state = Mutex(State())

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Registers a device's token with whatever other registrations are waiting (``PushToStartTokens/register(_:)``).
    /// - Throws: ``StoreError`` `invalid` for a token that is not hex, `conflict` when another device of the app
    ///   holds the token.
    public func register(_ registration: PushToStartTokens.Registration) async throws -> PushToStartTokens.Result {
        let registration = try registration.checked()
        return try await withCheckedThrowingContinuation { continuation in
            let startsWriting = self.state.withLock { state in
                state.waiting.append((registration, continuation))
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
                let batch = Array(state.waiting.prefix(Self.maximumBatch))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.isWriting = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = await PushToStartTokens.write(batch.map(\.registration), client: self.client, logger: self.logger)
            for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
        }
    }
}
