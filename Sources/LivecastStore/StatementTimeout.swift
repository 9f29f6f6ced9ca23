import PostgresNIO

extension PostgresClient.Configuration {
    /// PostgreSQL's `statement_timeout` on every connection the client opens (sent at start-up): a statement that
    /// runs longer, waiting for a lock included, is cancelled with SQLSTATE 57014. `nil` or zero means none.
    package var statementTimeout: Duration? {
        get {
            guard let value = self.options.additionalStartupParameters.last(where: { $0.0 == "statement_timeout" })?.1,
                let milliseconds = Int64(value), milliseconds > 0
            else { return nil }
            return .milliseconds(milliseconds)
        }
        set {
            self.options.additionalStartupParameters.removeAll { $0.0 == "statement_timeout" }
            guard let newValue, newValue > .zero else { return }
            let (seconds, attoseconds) = newValue.components
            let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            self.options.additionalStartupParameters.append(("statement_timeout", String(milliseconds)))
        }
    }
}
