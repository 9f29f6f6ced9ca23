import PostgresNIO

extension PostgresTransactionError {
    /// The error that failed the transaction: its body's, else `BEGIN`'s, else `COMMIT`'s.
    package var cause: (any Error)? {
        self.closureError ?? self.beginError ?? self.commitError
    }
}
