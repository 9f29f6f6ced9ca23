import ArgumentParser

/// How long `serve` waits on PostgreSQL: a statement, and a request for its connection and queries.
struct DatabaseWaitOptions: ParsableArguments {
    @Option(help: "PostgreSQL statement_timeout in seconds on the service's connections (default: $LIVECAST_STATEMENT_TIMEOUT, else 60; 0 disables).")
    var statementTimeout: Int?

    @Option(
        help: """
            Seconds a request may wait on PostgreSQL, for a pool connection and its queries, before it is answered 503 \
            database_unavailable (default: $LIVECAST_DATABASE_WAIT_TIMEOUT, else 10).
            """
    )
    var databaseWaitTimeout: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "statement-timeout": self.statementTimeout.map { "\($0)" },
            "database-wait-timeout": self.databaseWaitTimeout.map { "\($0)" },
        ]
    }
}
