import Synchronization

/// How many bulk imports run at once on this instance: a few per app, a few more in all. An import reads up to
/// 16 MiB and writes up to 10,000 rows, yet costs one request of its key's rate limit, so without this one backend
/// key could start enough at once to buffer gigabytes and keep PostgreSQL busy for every app. An import over either
/// cap is answered `429` with `Retry-After` before its body is read.
final class ImportSlots: Sendable {
    /// Imports of one app at once on one instance: 2, so a backend may keep two batches going (as
    /// `scripts/bench.sh --api` does), and no more.
    static let perApp = 2
    /// Imports at once on one instance, all apps together: 4, at most 64 MiB of bodies buffered.
    static let perInstance = 4
    /// What a refused import is told to wait: about the time one import of 10,000 rows takes.
    static let retryAfter = 2

    private struct Running {
        var total = 0
        var byApp: [Int64: Int] = [:]
    }

    private let running = Mutex(Running())

    /// Runs `body` in a slot of `appID`'s.
    /// - Throws: ``APIError`` `429 rate_limited` (with `Retry-After`) when the app or the instance runs its most
    ///   imports already; what `body` throws.
    func withSlot<Result: Sendable>(appID: Int64, _ body: () async throws -> Result) async throws -> Result {
        let taken = self.running.withLock { running in
            guard running.total < Self.perInstance, running.byApp[appID, default: 0] < Self.perApp else { return false }
            running.total += 1
            running.byApp[appID, default: 0] += 1
            return true
        }
        guard taken else {
            throw APIError.rateLimited(
                "an import runs \(Self.perApp) at a time per app and \(Self.perInstance) per server; this one was not started",
                retryAfter: Self.retryAfter
            )
        }
        defer {
            self.running.withLock { running in
                running.total -= 1
                running.byApp[appID, default: 1] -= 1
                if running.byApp[appID] == 0 { running.byApp[appID] = nil }
            }
        }
        return try await body()
    }
}
