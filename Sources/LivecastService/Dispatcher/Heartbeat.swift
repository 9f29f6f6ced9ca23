import LivecastCore
import LivecastStore
import NIOPosix
import PostgresNIO
import Synchronization

/// The claims one round of a dispatcher holds: the updates, slices, owed pushes and queued starts it claimed, which its
/// heartbeat renews.
///
/// Only these, not every claim under the dispatcher's id: the workers of a dispatcher share its id, and a claim
/// left behind by a round that failed would otherwise be renewed by the other rounds' heartbeats for as long as any
/// of them runs, instead of being taken over once its lease runs out.
final class RoundClaims: Sendable {
    private struct Held {
        var updates: [Int64] = []
        var slices: [Int64] = []
        var owedPushes: [Int64] = []
        var queuedStarts: [Int64] = []
    }

    private let held = Mutex(Held())

    /// Adds updates the round claimed.
    func hold(updates: some Sequence<Int64>) {
        self.held.withLock { $0.updates.append(contentsOf: updates) }
    }

    /// Adds a slice of an update the round claimed.
    func hold(slice: Int64) {
        self.held.withLock { $0.slices.append(slice) }
    }

    /// Adds owed pushes the round claimed.
    func hold(owedPushes: some Sequence<Int64>) {
        self.held.withLock { $0.owedPushes.append(contentsOf: owedPushes) }
    }

    /// Adds queued starts the round claimed.
    func hold(queuedStarts: some Sequence<Int64>) {
        self.held.withLock { $0.queuedStarts.append(contentsOf: queuedStarts) }
    }

    fileprivate var current: (updates: [Int64], slices: [Int64], owedPushes: [Int64], queuedStarts: [Int64]) {
        self.held.withLock { ($0.updates, $0.slices, $0.owedPushes, $0.queuedStarts) }
    }
}

extension Dispatcher {
    /// Runs `body` while a heartbeat renews, every third of the lease, the lease of every claim of the round
    /// (`claims`, which `body` fills as it claims): a live dispatcher keeps a slow page's claim, and a dead one's
    /// claims, or those of a round that failed, are taken over once the lease runs out.
    func withHeartbeat<Result: Sendable>(renewing claims: RoundClaims, _ body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.beat(claims) }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    private func beat(_ claims: RoundClaims) async {
        while (try? await MultiThreadedEventLoopGroup.singleton.any().sleep(for: self.settings.lease / 3)) != nil {
            let (updates, slices, owedPushes, queuedStarts) = claims.current
            do {
                try await self.outbox.renew(updates: updates, slices: slices, owedPushes: owedPushes, queuedStarts: queuedStarts)
            } catch {
                self.logger.warning("could not renew the dispatcher's claims", metadata: ["error": "\(error)"])
            }
        }
    }
}
