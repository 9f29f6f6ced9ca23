import PostgresNIO

extension StoreError {
    /// Whether an error means the database connection was lost or refused, so that the same work may succeed once
    /// PostgreSQL answers again: a guarded lease's ``ConnectionClosedError``; postgres-nio's closed or failed
    /// connections, `clientClosedConnection` included (a statement sent while it was closing a connection the server
    /// had ended); and SQLSTATE classes 08 (connection exception) and 57P (the server shutting down, crashed, or
    /// starting up). Also inside a transaction's error.
    package static func isConnectionLoss(_ error: any Error) -> Bool {
        if error is ConnectionClosedError { return true }
        if let transaction = error as? PostgresTransactionError {
            return transaction.cause.map(Self.isConnectionLoss) ?? false
        }
        guard let error = error as? PSQLError else { return false }
        let lost: [PSQLError.Code] = [.connectionError, .clientClosedConnection, .serverClosedConnection, .uncleanShutdown, .poolClosed]
        if lost.contains(error.code) { return true }
        guard let sqlState = error.serverInfo?[.sqlState] else { return false }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P")
    }
}
