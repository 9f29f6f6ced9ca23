import Logging
package import PostgresNIO

/// Applies the migrations of `sql/` that a database lacks, each in its own transaction, under a PostgreSQL
/// advisory lock so that instances starting together take turns.
///
/// Applied files are recorded in `livecast_migrations` with their checksum; the runner refuses to touch a
/// database where an applied file changed or disappeared.
package struct MigrationRunner: Sendable {
    /// What a run did.
    package struct Report: Sendable, Hashable {
        /// The files applied by this run, in order.
        package var applied: [String]
        /// How many files were already applied before it.
        package var alreadyApplied: Int
    }

    /// The advisory lock key: the bytes of "livecast".
    static let lockKey: Int64 = 0x6C69_7665_6361_7374

    /// The migrations, in version order.
    package let migrations: [Migration]

    /// Creates a runner.
    /// - Parameter migrations: The migrations, for example from ``Migration/load(from:)``.
    package init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Applies what is missing. The client's statement timeout does not apply: waiting for another instance's
    /// migrations, or a long migration, is not a runaway statement.
    /// - Parameters:
    ///   - client: A running client.
    ///   - logger: Logs each file applied.
    /// - Throws: ``MigrationError`` when an applied file changed or is gone, or a statement fails (the failing
    ///   file's transaction is rolled back; earlier files stay applied).
    package func run(on client: PostgresClient, logger: Logger) async throws -> Report {
        try await client.withGuardedConnection { connection in
            try await connection.query("SET statement_timeout = 0", logger: logger)
            do {
                try await connection.query("SELECT pg_advisory_lock(\(Self.lockKey))", logger: logger)
                let report = try await self.migrate(connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                try await connection.query("RESET statement_timeout", logger: logger)
                return report
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))", logger: logger)
                _ = try? await connection.query("RESET statement_timeout", logger: logger)
                throw error
            }
        }
    }

    /// The files a database has applied: version, name and checksum.
    package static func applied(on client: PostgresClient, logger: Logger) async throws -> [(version: Int, name: String, checksum: String)] {
        try await client.withGuardedConnection { connection in
            try await Self.applied(connection, logger: logger)
        }
    }

    private static func applied(_ connection: PostgresConnection, logger: Logger) async throws -> [(version: Int, name: String, checksum: String)] {
        let exists = try await connection.query("SELECT to_regclass('livecast_migrations') IS NOT NULL", logger: logger)
        for try await present in exists.decode(Bool.self) where !present { return [] }
        var applied: [(Int, String, String)] = []
        let rows = try await connection.query("SELECT version, name, checksum FROM livecast_migrations ORDER BY version", logger: logger)
        for try await row in rows.decode((Int, String, String).self) { applied.append(row) }
        return applied
    }

    private func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> Report {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS livecast_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
        let applied = try await Self.applied(connection, logger: logger)
        let byVersion = Dictionary(uniqueKeysWithValues: self.migrations.map { ($0.version, $0) })
        for record in applied {
            guard let migration = byVersion[record.version] else {
                throw MigrationError(message: "\(record.name) was applied to this database but is no longer among the migrations")
            }
            guard migration.isApplied(asRecorded: record.checksum) else {
                throw MigrationError(
                    message:
                        "\(migration.name) changed after it was applied (checksum \(record.checksum.prefix(12))…, file \(migration.checksum.prefix(12))…); add a new migration instead"
                )
            }
        }
        let appliedVersions = Set(applied.map(\.version))
        var report = Report(applied: [], alreadyApplied: applied.count)
        for migration in self.migrations where !appliedVersions.contains(migration.version) {
            try await connection.query("BEGIN", logger: logger)
            for statement in SQLStatements.split(migration.sql) {
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                } catch let error as PSQLError {
                    let detail = error.serverInfo?[.message] ?? "\(error.code)"
                    throw MigrationError(message: "\(migration.name): \(detail)")
                }
            }
            try await connection.query(
                "INSERT INTO livecast_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(migration.checksum))",
                logger: logger
            )
            try await connection.query("COMMIT", logger: logger)
            logger.info("Applied migration", metadata: ["migration.name": "\(migration.name)"])
            report.applied.append(migration.name)
        }
        return report
    }
}
