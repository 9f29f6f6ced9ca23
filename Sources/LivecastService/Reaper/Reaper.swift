package import Foundation
import LivecastCore
import LivecastStore
import Logging
package import PostgresNIO

/// One pass of the scheduled clean-up, app by app: ends stale activities and feeds and activities nearing
/// ActivityKit's 8-hour limit (through the outbox, so the dispatcher sends the ends in order), marks ended
/// activities dismissed once their dismissal date passed, retires the channels of ended feeds, expires
/// push-to-start tokens not seen for long, and prunes old rows in bounded batches.
///
/// A pass is idempotent: a second one right after the first finds nothing to do. Two reapers may run at once (a
/// cron job beside `serve`): each app is worked on by one pass at a time, under a PostgreSQL advisory lock, and the
/// store's row locks and states keep an activity or a feed from being ended twice even without it.
package struct Reaper: Sendable {
    /// An app as the reaper sees it, with its own retention periods.
    struct App {
        var id: Int64
        var bundleID: String
        var environment: String
        var retention: ReaperPolicy.Retention
    }

    let database: PostgresClient
    let clientForApp: Dispatcher.ClientForApp
    let policy: ReaperPolicy
    let logger: Logger

    /// - Parameters:
    ///   - database: The store.
    ///   - clientForApp: An app's APNs client, asked for only to delete channels.
    ///   - policy: The periods and margins.
    ///   - logger: Logs what failed.
    package init(database: PostgresClient, clientForApp: @escaping Dispatcher.ClientForApp, policy: ReaperPolicy = ReaperPolicy(), logger: Logger) {
        self.database = database
        self.clientForApp = clientForApp
        self.policy = policy
        self.logger = logger
    }

    /// Runs one pass over every app.
    /// - Parameters:
    ///   - dryRun: Only count what a pass would do; write nothing and ask APNs nothing.
    ///   - now: The time the periods count from.
    /// - Returns: One report per app, by bundle id and environment. A rule that fails is recorded in its app's
    ///   report and the other rules still run.
    /// - Throws: When the apps cannot be read.
    package func pass(dryRun: Bool = false, now: Date = Date()) async throws -> [ReaperReport] {
        let seconds = Int(now.timeIntervalSince1970)
        var reports: [ReaperReport] = []
        for app in try await self.apps() {
            if dryRun {
                reports.append(await self.preview(app, now: seconds))
            } else {
                let report = await self.reap(app, now: seconds)
                ReaperMetrics.record(report)
                await self.remember(report, of: app)
                reports.append(report)
            }
        }
        if !dryRun { ReaperMetrics.recordRun(at: now) }
        return reports
    }

    /// Keeps the pass's summary on the app (the console's overview shows it); a failure to is only logged.
    private func remember(_ report: ReaperReport, of app: App) async {
        guard !report.skipped else { return }
        do {
            try await self.database.guardedQuery(
                "UPDATE apps SET reaped_at = now(), reap_summary = \(report.summary(dryRun: false)) WHERE id = \(app.id)",
                logger: self.logger
            )
        } catch {
            self.logger.warning("could not record the reaper's pass", metadata: ["app": "\(app.bundleID)", "error": "\(Self.describe(error))"])
        }
    }

    func apps() async throws -> [App] {
        let rows = try await self.database.guardedQuery(
            """
            SELECT id, bundle_id, environment, retain_updates_days, retain_deliveries_days, retain_dismissed_activities_days
            FROM apps ORDER BY bundle_id, environment
            """,
            logger: self.logger
        )
        var apps: [App] = []
        let defaults = self.policy.retention
        for try await (id, bundleID, environment, updates, deliveries, activities) in rows.decode((Int64, String, String, Int?, Int?, Int?).self) {
            let retention = ReaperPolicy.Retention(
                updates: updates.map(Duration.days) ?? defaults.updates,
                deliveries: deliveries.map(Duration.days) ?? defaults.deliveries,
                dismissedActivities: activities.map(Duration.days) ?? defaults.dismissedActivities
            )
            apps.append(App(id: id, bundleID: bundleID, environment: environment, retention: retention))
        }
        return apps
    }

    /// Every rule, under the app's advisory lock (held by a transaction that writes nothing).
    private func reap(_ app: App, now: Int) async -> ReaperReport {
        do {
            let report: ReaperReport? = try await self.database.withGuardedTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(ReaperLocks.appNamespace), \(SendLocks.key(app.id)))",
                    logger: self.logger
                )
                var locked = false
                for try await value in rows.decode(Bool.self) { locked = value }
                guard locked else { return nil }
                // The lock holds until this transaction ends; the rules work on other connections meanwhile.
                return await self.runRules(app, now: now)
            }
            if let report { return report }
            var skipped = ReaperReport(bundleID: app.bundleID, environment: app.environment)
            skipped.skipped = true
            return skipped
        } catch {
            var failed = ReaperReport(bundleID: app.bundleID, environment: app.environment)
            failed.failures.append("cannot take the app's reaper lock: \(Self.describe(error))")
            return failed
        }
    }

    private func runRules(_ app: App, now: Int) async -> ReaperReport {
        var report = ReaperReport(bundleID: app.bundleID, environment: app.environment)
        await self.rule("ending stale activities and feeds", &report) { report in
            report.endedActivities += try await self.endStaleActivities(app, now: now)
            report.endedFeeds += try await self.endStaleFeeds(app, now: now)
        }
        await self.rule("ending activities near the 8-hour limit", &report) { report in
            report.endedActivities += try await self.endAgingActivities(app, now: now)
        }
        await self.rule("dismissing ended activities", &report) { report in
            report.dismissedActivities += try await self.dismissActivities(app, now: now, dryRun: false)
        }
        await self.rule("retiring channels of ended feeds", &report) { report in
            let (retired, failures) = try await self.retireChannels(app, now: now)
            report.retiredChannels += retired
            report.failures += failures
        }
        await self.rule("expiring push-to-start tokens", &report) { report in
            report.expiredTokens += try await self.expireTokens(app, now: now, dryRun: false)
        }
        await self.rule("pruning", &report) { report in
            report.prunedRows += try await self.prune(app, now: now, dryRun: false)
        }
        return report
    }

    /// What a pass would do, counted without writing.
    private func preview(_ app: App, now: Int) async -> ReaperReport {
        var report = ReaperReport(bundleID: app.bundleID, environment: app.environment)
        await self.rule("counting", &report) { report in
            report.endedActivities = try await self.count(self.staleActivities(app, now: now, after: 0, limit: nil))
            report.endedActivities += try await self.count(self.agingActivities(app, now: now, after: 0, limit: nil))
            report.endedFeeds = try await self.count(self.staleFeeds(app, now: now, after: 0, limit: nil))
            report.dismissedActivities = try await self.dismissActivities(app, now: now, dryRun: true)
            report.retiredChannels = try await self.count(self.channelsToRetire(app, now: now))
            report.expiredTokens = try await self.expireTokens(app, now: now, dryRun: true)
            report.prunedRows = try await self.prune(app, now: now, dryRun: true)
        }
        return report
    }

    /// Runs a rule, recording its failure in the report instead of stopping the pass.
    private func rule(_ name: String, _ report: inout ReaperReport, _ body: (inout ReaperReport) async throws -> Void) async {
        do {
            try await body(&report)
        } catch {
            self.logger.error("reaper rule failed", metadata: ["app": "\(report.bundleID)", "rule": "\(name)", "error": "\(Self.describe(error))"])
            report.failures.append("\(name): \(Self.describe(error))")
        }
    }

    /// A query around another: `prefix`, the inner query, `suffix` (neither with binds of its own).
    func wrapping(_ prefix: String, _ inner: PostgresQuery, _ suffix: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: prefix + inner.sql + suffix, binds: inner.binds)
    }

    /// The rows a query counts.
    func count(_ query: PostgresQuery) async throws -> Int {
        let rows = try await self.database.guardedQuery(self.wrapping("SELECT count(*)::int FROM (", query, ") AS candidates"), logger: self.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// The number of rows a statement returned (its `RETURNING` rows).
    func changed(_ query: PostgresQuery) async throws -> Int {
        let rows = try await self.database.guardedQuery(query, logger: self.logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// Runs a bounded statement until it changes no more rows. - Returns: the rows changed in all.
    func inBatches(_ query: PostgresQuery) async throws -> Int {
        var total = 0
        while true {
            let changed = try await self.changed(query)
            total += changed
            if changed < self.policy.batchSize { return total }
        }
    }

    /// PostgreSQL's own message for its errors; the description for others.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return error.serverInfo?[.message] ?? "\(error.code)" }
        if let error = error as? PostgresTransactionError, let closureError = error.closureError { return Self.describe(closureError) }
        return "\(error)"
    }
}

/// Advisory lock namespaces of the scheduled jobs (see ``SendLocks`` for the dispatcher's; namespace 5 is
/// `analyze_if_outgrown`'s, in `sql/0026`).
enum ReaperLocks {
    /// One pass at a time per app (key: the app id).
    static let appNamespace: Int32 = 3
    /// The one `serve` instance that runs the periodic job (key 0).
    static let scheduleNamespace: Int32 = 4
}
