import LivecastStore
import LocalPostgres
import PostgresNIO
import Synchronization
import Testing

@testable import LivecastServer

/// The service's PostgreSQL pool, configured as `livecast serve` configures it, through outages.
@Suite struct ServicePoolTests {
    /// Leases taken without pause while PostgreSQL restarts, three times: the process lives on (it does not trap),
    /// leases fail while the server is down, and they succeed again after each restart.
    ///
    /// With connections kept open (`minimumConnections` above 0), postgres-nio 1.33's pool trapped here within one
    /// or two restarts: while connections fail to open it drops each failed one but the one it retries, and a lease
    /// that then finds fewer than the minimum trips the precondition `minimumConcurrentConnections <= stats.active`.
    @Test(.timeLimit(.minutes(3))) func leasesSurvivePostgreSQLRestarts() async throws {
        let postgres = try await TemporaryPostgres.start()
        do {
            let client = PostgresClient(configuration: postgres.configuration.forService(statementTimeout: .seconds(5)))
            let tally = LeaseTally()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                for _ in 0..<16 {
                    group.addTask {
                        while !tally.isDone {
                            do {
                                _ = try await client.withGuardedConnection { try await $0.query("SELECT 1", logger: Self.logger) }
                                tally.succeeded()
                            } catch {
                                tally.failed()
                                try? await Task.sleep(for: .milliseconds(10))
                            }
                        }
                    }
                }
                for restart in 1...3 {
                    try await Task.sleep(for: .milliseconds(500))
                    let failuresBefore = tally.failures
                    try await postgres.restart { try await Task.sleep(for: .milliseconds(300)) }
                    let successesAfter = tally.successes
                    let deadline = ContinuousClock.now + .seconds(30)
                    while tally.successes == successesAfter, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    #expect(tally.failures > failuresBefore, "restart \(restart): no lease failed while PostgreSQL was down")
                    #expect(tally.successes > successesAfter, "restart \(restart): no lease succeeded after PostgreSQL was back")
                }
                tally.finish()
                // The workers end; the pool's run ends with the group's cancellation.
                for _ in 0..<16 { try await group.next() }
                group.cancelAll()
            }
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    private static let logger = Logger(label: "livecast.tests.pool")
}

/// What the leases of ``ServicePoolTests`` came to, counted across their tasks.
private final class LeaseTally: Sendable {
    private let counts = Mutex((successes: 0, failures: 0, done: false))

    var successes: Int { self.counts.withLock { $0.successes } }
    var failures: Int { self.counts.withLock { $0.failures } }
    var isDone: Bool { self.counts.withLock { $0.done } }

    func succeeded() { self.counts.withLock { $0.successes += 1 } }
    func failed() { self.counts.withLock { $0.failures += 1 } }
    func finish() { self.counts.withLock { $0.done = true } }
}
