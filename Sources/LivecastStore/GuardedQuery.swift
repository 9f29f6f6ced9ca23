package import Logging
package import PostgresNIO

extension PostgresClient {
    /// Runs one statement, as `query` does, on a lease of ``withGuardedConnection(logger:file:line:_:)``, and returns
    /// its rows once they have all arrived.
    ///
    /// After a connection loss the pool can hand out a connection PostgreSQL has already closed, before it has seen
    /// the close. postgres-nio (1.33) never answers a statement issued on it, so a plain `query` there waits for
    /// good; this one ends with ``ConnectionClosedError`` instead, half a second after the lease finds its connection
    /// closed (``GuardedLeasePatience/statement``). Meant for statements whose rows are few (a page, a batch, a
    /// count): they are held in memory.
    @discardableResult
    package func guardedQuery(_ query: PostgresQuery, logger: Logger, file: String = #fileID, line: Int = #line) async throws -> StatementRows {
        try await self.withGuardedConnection(logger: logger, file: file, line: line, patience: .statement) { connection in
            StatementRows(rows: try await connection.query(query, logger: logger).collect())
        }
    }

    /// Asks PostgreSQL the cheapest question there is (`SELECT 1`), as ``guardedQuery(_:logger:file:line:)`` runs a
    /// statement: it returns once the server has answered, and throws what kept it from answering.
    package func ping(logger: Logger) async throws {
        try await self.guardedQuery("SELECT 1", logger: logger)
    }

    /// Runs a prepared statement as ``guardedQuery(_:logger:file:line:)`` runs a query, and returns its rows once
    /// they have all arrived, decoded.
    package func guardedExecute<Statement: PostgresPreparedStatement>(
        _ statement: Statement,
        logger: Logger,
        file: String = #fileID,
        line: Int = #line
    ) async throws -> [Statement.Row] where Statement.Row: Sendable {
        try await self.withGuardedConnection(logger: logger, file: file, line: line, patience: .statement) { connection in
            var rows: [Statement.Row] = []
            for try await row in try await connection.execute(statement, logger: logger) { rows.append(row) }
            return rows
        }
    }
}

/// The rows of a statement run by ``PostgresNIO/PostgresClient/guardedQuery(_:logger:file:line:)``, read as
/// postgres-nio's row sequence is (`for try await row in rows`, `rows.decode(…)`).
package struct StatementRows: AsyncSequence, Sendable {
    package typealias Element = PostgresRow
    package typealias Failure = any Error

    /// The rows, in the order the server sent them.
    package let rows: [PostgresRow]

    /// Whether the statement returned no row: for an `UPDATE … RETURNING`, that it changed none.
    package var isEmpty: Bool { self.rows.isEmpty }

    /// How many rows the statement returned.
    package var count: Int { self.rows.count }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(rows: self.rows.makeIterator())
    }

    /// Hands out the rows one by one.
    package struct AsyncIterator: AsyncIteratorProtocol {
        var rows: IndexingIterator<[PostgresRow]>

        package mutating func next() async throws -> PostgresRow? {
            self.rows.next()
        }
    }
}
