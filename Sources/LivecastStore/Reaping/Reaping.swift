import Logging
import PostgresNIO

/// The reaper's statements: the rows each of its rules works on, and the changes it makes to them. What counts as
/// stale, the periods and the margins are the reaper's (`LivecastService`), passed in as numbers; the reaper calls
/// APNs, this only reads and writes PostgreSQL.
///
/// A rule's rows are counted for a dry run, or changed in bounded batches (``Run``), so no statement holds many
/// locks for long and a second reaper skips what the first has locked.
package struct Reaping: DatabaseBacked {
    /// How a rule's statement runs.
    package enum Run: Sendable, Hashable {
        /// Count the rows it would change; write nothing.
        case count
        /// Change at most this many rows a statement, until a statement changes fewer.
        case batches(of: Int)
    }

    /// An app as the reaper sees it: its own retention periods, in days, where it sets them.
    package struct App: Sendable, Hashable {
        package var id: Int64
        package var bundleID: String
        package var environment: String
        package var retainUpdatesDays: Int?
        package var retainDeliveriesDays: Int?
        package var retainDismissedActivitiesDays: Int?
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Every app, by bundle id and environment.
    package func apps() async throws -> [App] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT id, bundle_id, environment, retain_updates_days, retain_deliveries_days, retain_dismissed_activities_days
            FROM apps ORDER BY bundle_id, environment
            """,
            logger: self.logger
        )
        var apps: [App] = []
        for try await (id, bundleID, environment, updates, deliveries, activities) in rows.decode((Int64, String, String, Int?, Int?, Int?).self) {
            apps.append(
                App(
                    id: id,
                    bundleID: bundleID,
                    environment: environment,
                    retainUpdatesDays: updates,
                    retainDeliveriesDays: deliveries,
                    retainDismissedActivitiesDays: activities
                )
            )
        }
        return apps
    }

    /// Keeps a pass's summary on the app, with the time (the console's overview shows them).
    package func recordPass(appID: Int64, summary: String) async throws {
        try await self.client.guardedQuery("UPDATE apps SET reaped_at = now(), reap_summary = \(summary) WHERE id = \(appID)", logger: self.logger)
    }

    /// A query around another: `prefix`, the inner query, `suffix` (neither with binds of its own).
    func wrapping(_ prefix: String, _ inner: PostgresQuery, _ suffix: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: prefix + inner.sql + suffix, binds: inner.binds)
    }

    /// The rows a query counts.
    func count(_ query: PostgresQuery) async throws -> Int {
        let rows = try await self.client.guardedQuery(self.wrapping("SELECT count(*)::int FROM (", query, ") AS candidates"), logger: self.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// The number of rows a statement returned (its `RETURNING` rows).
    func changed(_ query: PostgresQuery) async throws -> Int {
        try await self.client.guardedQuery(query, logger: self.logger).count
    }

    /// Runs a rule's statement as `run` says: counts its candidates, or runs `change` (a statement over at most
    /// `limit` candidates, locked) until it changes fewer rows than that.
    /// - Parameters:
    ///   - candidates: The rule's candidates, given a limit (`nil`: all) and whether to lock them.
    ///   - change: The statement that changes the candidates it is given.
    /// - Returns: The rows counted, or changed in all.
    func run(_ run: Run, candidates: (_ limit: Int?, _ locking: Bool) -> PostgresQuery, change: (PostgresQuery) -> PostgresQuery) async throws -> Int
    {
        switch run {
        case .count:
            return try await self.count(candidates(nil, false))
        case .batches(let size):
            let statement = change(candidates(size, true))
            var total = 0
            while true {
                let changed = try await self.changed(statement)
                total += changed
                if changed < size { return total }
            }
        }
    }
}
