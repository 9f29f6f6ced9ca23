import LivecastTesting
import PostgresNIO
import Synchronization
import Testing

@testable import LivecastStore

/// A lease whose connection PostgreSQL closes between two of its statements ends with an error instead of waiting
/// for good: postgres-nio never answers a statement issued on a closed connection.
@Suite struct GuardedLeasesTests {
    /// How long a test waits for a lease before it calls it stuck: a body's guarded lease gives up ten seconds after
    /// a look found its connection closed, a look a second (``GuardedLeasePatience/body``).
    private static let patience = Duration.seconds(30)

    /// The outcome of `body`, or `nil` when it has not finished within `patience` (then it is left running).
    private static func outcome(
        within patience: Duration = Self.patience,
        of body: @escaping @Sendable () async throws -> Void
    ) async -> Result<Void, any Error>? {
        let first = FirstOutcome()
        return await withCheckedContinuation { continuation in
            first.continuation = continuation
            Task {
                do {
                    try await body()
                    first.finish(.success(()))
                } catch {
                    first.finish(.failure(error))
                }
            }
            Task {
                try? await Task.sleep(for: patience)
                first.finish(nil)
            }
        }
    }

    /// Terminates the backend of `connection` from another connection, as a PostgreSQL shutting down would, and
    /// waits until the client has closed it: its channel handler is gone, so a statement written now reaches nobody
    /// (while the handler is still there, it fails such a statement itself).
    private static func terminate(_ connection: PostgresConnection, _ fixture: StoreFixture) async throws {
        let pid = try await connection.query("SELECT pg_backend_pid()", logger: fixture.logger).collect().first?.decode(Int32.self)
        try await fixture.client.query("SELECT pg_terminate_backend(\(pid ?? 0))", logger: fixture.logger)
        try await connection.closeFuture.get()
    }

    /// Expects a lease's `outcome` to be ``ConnectionClosedError``, given within `waited`.
    private static func expectGaveUp(_ outcome: Result<Void, any Error>?, waited: Duration) {
        switch outcome {
        case .failure(let error): #expect(error is ConnectionClosedError, "\(error)")
        case .success: Issue.record("a statement on a closed connection succeeded")
        case nil: Issue.record("the lease still waits \(waited) after its connection closed")
        }
    }

    @Test func aTransactionWhoseConnectionClosesBetweenStatementsEndsWithAnError() async throws {
        try await StoreFixture.with("guarded_transaction") { fixture in
            let lines = LogLines()
            let leaseLine = Mutex(0)
            let outcome = await Self.outcome {
                leaseLine.withLock { $0 = #line + 1 }
                try await fixture.client.withGuardedTransaction(logger: lines.logger(label: "test.lease")) { connection in
                    try await Self.terminate(connection, fixture)
                    try await connection.query("SELECT 1", logger: fixture.logger)
                }
            }
            Self.expectGaveUp(outcome, waited: Self.patience)
            // The lease says it gave up, and where it was taken.
            let site = "lease=\(#fileID):\(leaseLine.withLock { $0 })"
            #expect(lines.written.count == 1, "\(lines.written)")
            #expect(lines.written.first?.contains("warning") == true, "\(lines.written)")
            #expect(lines.written.first?.contains(site) == true, "\(lines.written) should name \(site)")
            // The pool goes on with another connection.
            let rows = try await fixture.client.query("SELECT 1", logger: fixture.logger).collect()
            #expect(rows.count == 1)
        }
    }

    /// A statement's lease (``GuardedLeasePatience/statement``, as `guardedQuery` and `guardedExecute` take) gives up
    /// half a second after it finds its connection closed, not ten: a batch of registrations queued behind it after a
    /// PostgreSQL restart waits that long, not eleven seconds.
    @Test func aStatementWhoseConnectionClosedGivesUpWithinASecond() async throws {
        try await StoreFixture.with("guarded_statement") { fixture in
            let lines = LogLines()
            let outcome = await Self.outcome(within: .seconds(5)) {
                try await fixture.client.withGuardedConnection(logger: lines.logger(label: "test.lease"), patience: .statement) {
                    connection in
                    try await Self.terminate(connection, fixture)
                    try await connection.query("SELECT 1", logger: fixture.logger)
                }
            }
            Self.expectGaveUp(outcome, waited: .seconds(5))
            #expect(lines.written.count == 1, "\(lines.written)")
            #expect(lines.written.first?.contains("closedFor=500 ms") == true, "\(lines.written)")
        }
    }

    @Test func aBodyThatFinishedItsStatementsBeforeTheCloseStillReturnsItsResult() async throws {
        try await StoreFixture.with("guarded_result") { fixture in
            let lines = LogLines()
            // The lease looks every 20 ms; the body still works for 200 ms after the close.
            let patience = GuardedLeasePatience(check: .milliseconds(20), closedFor: .seconds(10))
            let answer = try await fixture.client.withGuardedConnection(logger: lines.logger(label: "test.lease"), patience: patience) {
                connection in
                let value = try await connection.query("SELECT 42", logger: fixture.logger).collect().first?.decode(Int.self)
                try await Self.terminate(connection, fixture)
                // Still working when the lease first finds its connection closed.
                try await Task.sleep(for: .milliseconds(200))
                return value
            }
            #expect(answer == 42)
            #expect(lines.written.isEmpty, "a lease that got its result gave nothing up: \(lines.written)")
        }
    }

    @Test func aLeaseRunsOnItsConnectionsEventLoop() async throws {
        try await StoreFixture.with("guarded_loop") { fixture in
            let stayedOnTheLoop = try await fixture.client.withGuardedConnection(logger: fixture.logger) { connection in
                let startedThere = connection.eventLoop.inEventLoop
                try await connection.query("SELECT 1", logger: fixture.logger)
                return startedThere && connection.eventLoop.inEventLoop
            }
            #expect(stayedOnTheLoop)
        }
    }

    @Test func aGuardedStatementHandsBackItsRowsInOrderAndItsErrors() async throws {
        try await StoreFixture.with("guarded_query") { fixture in
            var numbers: [Int] = []
            for try await number in try await fixture.client.guardedQuery("SELECT generate_series(1, 3)", logger: fixture.logger).decode(Int.self) {
                numbers.append(number)
            }
            #expect(numbers == [1, 2, 3])
            await #expect(throws: PSQLError.self) {
                try await fixture.client.guardedQuery("SELECT 1 / 0", logger: fixture.logger)
            }
        }
    }
}

/// The first of several outcomes, handed to a continuation once.
private final class FirstOutcome: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Void, any Error>?, Never>?
        var done = false
    }

    private let state = Mutex(State())

    var continuation: CheckedContinuation<Result<Void, any Error>?, Never>? {
        get { self.state.withLock { $0.continuation } }
        set { self.state.withLock { $0.continuation = newValue } }
    }

    func finish(_ outcome: Result<Void, any Error>?) {
        let continuation = self.state.withLock { state -> CheckedContinuation<Result<Void, any Error>?, Never>? in
            guard !state.done else { return nil }
            state.done = true
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }
}
