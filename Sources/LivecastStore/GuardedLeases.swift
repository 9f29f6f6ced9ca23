package import Logging
package import NIOCore
package import PostgresNIO
import Synchronization

/// The error of a lease whose connection PostgreSQL closed under it (the server restarting or shutting down, the
/// backend terminated) while its work was still waiting.
package struct ConnectionClosedError: Error, CustomStringConvertible {
    package var description: String { "the database connection closed during the work" }
}

extension PostgresClient {
    /// Leases a connection for `body`, as `withConnection` does, but stops waiting for `body` when its connection
    /// has closed: then `body` is cancelled and the lease throws ``ConnectionClosedError``.
    ///
    /// postgres-nio (1.33) writes a statement issued on a closed connection nowhere and never answers it. A body
    /// whose connection closed between two of its statements waited for good: with PostgreSQL restarted under load,
    /// the group commit's transaction stuck that way held back every later update, and a dispatcher's round held its
    /// claims under a live heartbeat. The lease looks at its connection every `patience.check`, and gives up on a
    /// body still running `patience.closedFor` after it found the connection closed (``GuardedLeasePatience``).
    ///
    /// A connection the server has just closed can still be handed out before the pool has seen it close (the next
    /// lease of the task that saw it fail, say): the lease takes another, up to ``closedConnectionLeases`` times,
    /// before `body` runs.
    ///
    /// A lease that gives up on its body logs a warning naming where it was taken (`file:line`), so that a request
    /// or a dispatcher round caught by a restart can be traced to its statement.
    ///
    /// A lease for one statement (``guardedQuery(_:logger:file:line:)``, ``guardedExecute(_:logger:file:line:)``)
    /// passes ``GuardedLeasePatience/statement``: its body is the statement alone, so once the connection has closed
    /// under it the statement either fails at once or is never answered, and waiting ten seconds for it only held
    /// back everything queued behind it (a group commit's registrations, after a PostgreSQL restart).
    ///
    /// The lease runs on its connection's event loop (its task executor preference, ``EventLoopExecutors``), so its
    /// statements are written and their answers read without a hop to another thread and back for each
    /// (docs/PERFORMANCE.md).
    /// - Parameters:
    ///   - logger: Where the warning goes; by default the `livecast.store` logger.
    ///   - file: Where the lease is taken; the caller's by default.
    ///   - line: Where the lease is taken; the caller's by default.
    ///   - patience: How often the lease looks at its connection, and how long it lets `body` run on once closed.
    package func withGuardedConnection<Result: Sendable>(
        logger: Logger = GuardedLeaseSite.defaultLogger,
        file: String = #fileID,
        line: Int = #line,
        patience: GuardedLeasePatience = .body,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let site = GuardedLeaseSite(logger: logger, file: file, line: line, patience: patience)
        for _ in 0..<Self.closedConnectionLeases {
            let outcome: Result? = try await self.withConnection { connection in
                guard !connection.isClosed else { return nil }
                // On the connection's loop, where its statements are written and answered.
                let executor = EventLoopExecutors.singleton.executor(for: connection.eventLoop)
                return try await withTaskExecutorPreference(executor) {
                    try await GuardedLease<Result>(connection: connection, site: site).run(body)
                }
            }
            if let outcome { return outcome }
        }
        throw ConnectionClosedError()
    }

    /// Runs `body` in a transaction, as `withTransaction` does, on a lease of
    /// ``withGuardedConnection(logger:file:line:_:)``.
    package func withGuardedTransaction<Result: Sendable>(
        logger: Logger,
        file: String = #fileID,
        line: Int = #line,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await self.withGuardedConnection(logger: logger, file: file, line: line) { connection in
            try await connection.withTransaction(logger: logger) { try await body($0) }
        }
    }

    /// How many closed connections a guarded lease is handed before it gives up.
    static let closedConnectionLeases = 3
}

/// How patiently a guarded lease waits for a body whose connection has closed.
package struct GuardedLeasePatience: Sendable {
    /// How often the lease looks whether its connection has closed.
    package let check: TimeAmount
    /// How long the lease lets its body run on after a look found the connection closed.
    package let closedFor: TimeAmount

    package init(check: TimeAmount, closedFor: TimeAmount) {
        self.check = check
        self.closedFor = closedFor
    }

    /// For a body of several statements, or of work between them: one that finished its statements before the close
    /// (a transaction committed) has ten seconds to return its result, even on a machine too busy to run it at once.
    package static let body = Self(check: .seconds(1), closedFor: .seconds(10))
    /// For a body that is one statement and the reading of its rows: once its connection has closed, the statement
    /// has failed at once or will never be answered.
    package static let statement = Self(check: .milliseconds(250), closedFor: .milliseconds(500))
}

/// Where a guarded lease was taken, and the logger that tells when it gives up.
package struct GuardedLeaseSite: Sendable {
    /// The logger of leases taken without one: `livecast.store`.
    package static let defaultLogger = Logger(label: "livecast.store")

    let logger: Logger
    let file: String
    let line: Int
    let patience: GuardedLeasePatience

    /// Logs that the lease gave up on its body.
    func warnGivenUp() {
        self.logger.warning(
            "gave up waiting for database work whose connection closed",
            metadata: [
                "lease": "\(self.file):\(self.line)",
                "closedFor": "\(self.patience.closedFor.nanoseconds / 1_000_000) ms",
            ]
        )
    }
}

/// One guarded lease: its body runs in a task of its own, which the lease stops waiting for once the connection
/// has been closed for its site's ``GuardedLeasePatience/closedFor``.
private final class GuardedLease<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var outcome: Result<Value, any Error>?
        /// When a look first found the connection closed.
        var closedSince: NIODeadline?
    }

    private let connection: PostgresConnection
    private let site: GuardedLeaseSite
    private let state = Mutex(State())

    init(connection: PostgresConnection, site: GuardedLeaseSite) {
        self.connection = connection
        self.site = site
    }

    /// Runs `body` in a task of its own, with the caller's executor preference (the connection's loop).
    func run(_ body: @escaping @Sendable (PostgresConnection) async throws -> Value) async throws -> Value {
        let connection = self.connection
        let work = Task(executorPreference: currentTaskExecutorPreference()) {
            do {
                self.finish(.success(try await body(connection)))
            } catch {
                self.finish(.failure(error))
            }
        }
        let patience = self.site.patience
        let watch = connection.eventLoop.scheduleRepeatedTask(initialDelay: patience.check, delay: patience.check) { _ in
            guard connection.isClosed else { return }
            let now = NIODeadline.now()
            let givesUp = self.state.withLock { state in
                let closedSince = state.closedSince ?? now
                state.closedSince = closedSince
                return now - closedSince >= patience.closedFor
            }
            if givesUp {
                self.finish(.failure(ConnectionClosedError()), whenFirst: self.site.warnGivenUp)
                work.cancel()
            }
        }
        defer { watch.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = self.state.withLock { state in
                    if state.outcome == nil { state.continuation = continuation }
                    return state.outcome
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            work.cancel()
        }
    }

    /// The body's outcome, or the lease given up: the first one counts.
    /// - Parameter whenFirst: Runs when this outcome is the first, before the lease's caller resumes with it.
    private func finish(_ outcome: Result<Value, any Error>, whenFirst: () -> Void = {}) {
        let (isFirst, continuation) = self.state.withLock { state -> (Bool, CheckedContinuation<Value, any Error>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        guard isFirst else { return }
        whenFirst()
        continuation?.resume(with: outcome)
    }
}
