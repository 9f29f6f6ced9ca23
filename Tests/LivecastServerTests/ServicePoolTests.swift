import LivecastStore
import LocalPostgres
import PostgresNIO
import Synchronization
import Testing

@testable import LivecastServer

/// The service's PostgreSQL pool, configured as `livecast serve` configures it, through outages.
@Suite struct ServicePoolTests {
    /// Leases taken every few milliseconds while PostgreSQL restarts, three times: the process lives on (it does
    /// not trap), leases succeed again after each restart, and some failed on the way.
    ///
    /// With connections kept open (`minimumConnections` above 0), postgres-nio 1.33's pool trapped here within one
    /// or two restarts: while connections fail to open it drops each failed one but the one it retries, and a lease
    /// that then finds fewer than the minimum trips the precondition `minimumConcurrentConnections <= stats.active`.
    @Test(.timeLimit(.minutes(3))) func leasesSurvivePostgreSQLRestarts() async throws {
        let postgres = try await TemporaryPostgres.start()
        do {
            let client = PostgresClient(configuration: postgres.configuration.forService(statementTimeout: .seconds(5)))
            let tally = LeaseTally()
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                for _ in 0..<Self.workers {
                    group.addTask {
                        while !tally.isDone {
                            do {
                                _ = try await client.withGuardedConnection { try await $0.query("SELECT 1", logger: Self.logger) }
                                tally.succeeded()
                            } catch {
                                tally.failed()
                            }
                            // Paced, so that the suite's other tests keep their share of the machine.
                            try? await Task.sleep(for: .milliseconds(5))
                        }
                    }
                }
                for restart in 1...3 {
                    try await Task.sleep(for: .milliseconds(500))
                    let down = ContinuousClock.now
                    try await postgres.restart { try await Task.sleep(for: .seconds(1)) }
                    let up = ContinuousClock.now
                    let successesBefore = tally.successes
                    let deadline = up + .seconds(30)
                    while tally.successes == successesBefore, ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    print(
                        "pool restart \(restart) at \(down - started): PostgreSQL back after \(up - down), a lease succeeded \(ContinuousClock.now - up) later"
                    )
                    #expect(tally.successes > successesBefore, "restart \(restart): no lease succeeded after PostgreSQL was back")
                }
                tally.finish()
                // The workers end (a lease caught on a closed connection gives up after its patience, 10 s); the
                // pool's run ends with the group's cancellation.
                for _ in 0..<Self.workers { try await group.next() }
                group.cancelAll()
            }
            // A lease fails when it is caught on a connection the restart closed, or taken while PostgreSQL is down.
            #expect(tally.failures > 0, "no lease failed through three restarts")
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    private static let workers = 16
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
