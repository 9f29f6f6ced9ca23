import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The error of a lease whose connection PostgreSQL closed under it (the server restarting or shutting down, the
/// backend terminated) while its work was still waiting.
public struct ConnectionClosedError: Error, CustomStringConvertible {
    public var description: String { "the database connection closed during the work" }
}

extension PostgresClient {
    /// Leases a connection for `body`, as `withConnection` does, but stops waiting for `body` when its connection
    /// has closed: then `body` is cancelled and the lease throws ``ConnectionClosedError``.
    ///
    /// postgres-nio (1.33) writes a statement issued on a closed connection nowhere and never answers it. A body
    /// whose connection closed between two of its statements waited for good: with PostgreSQL restarted under load,
    /// the group commit's transaction stuck that way held back every later update, and a dispatcher's round held its
    /// claims under a live heartbeat. The lease looks at its connection every ``closedConnectionCheck``; a body still
    /// running at the look after the one that found the connection closed is given up, so a body that finished its
    /// statements just before the close still returns its result.
    public func withGuardedConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await self.withConnection { connection in
            try await GuardedLease<Result>(connection: connection).run(body)
        }
    }

    /// Runs `body` in a transaction, as `withTransaction` does, on a lease of ``withGuardedConnection(_:)``.
    public func withGuardedTransaction<Result: Sendable>(
        logger: Logger,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await self.withGuardedConnection { connection in
            try await connection.withTransaction(logger: logger) { try await body($0) }
        }
    }

    /// How often a guarded lease looks whether its connection has closed.
    static let closedConnectionCheck = TimeAmount.seconds(1)
}

/// One guarded lease: its body runs in a task of its own, which the lease stops waiting for once the connection
/// has closed.
private final class GuardedLease<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var outcome: Result<Value, any Error>?
        var sawClosed = false
    }

    private let connection: PostgresConnection
    private let state = Mutex(State())

    init(connection: PostgresConnection) {
        self.connection = connection
    }

    func run(_ body: @escaping @Sendable (PostgresConnection) async throws -> Value) async throws -> Value {
        let connection = self.connection
        let work = Task {
            do {
                self.finish(.success(try await body(connection)))
            } catch {
                self.finish(.failure(error))
            }
        }
        let watch = connection.eventLoop.scheduleRepeatedTask(
            initialDelay: PostgresClient.closedConnectionCheck,
            delay: PostgresClient.closedConnectionCheck
        ) { _ in
            guard connection.isClosed else { return }
            let givesUp = self.state.withLock { state in
                defer { state.sawClosed = true }
                return state.sawClosed
            }
            if givesUp {
                self.finish(.failure(ConnectionClosedError()))
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
    private func finish(_ outcome: Result<Value, any Error>) {
        let continuation = self.state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: outcome)
    }
}
