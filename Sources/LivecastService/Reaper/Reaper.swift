package import Foundation
import LivecastCore
import LivecastStore
import Logging
package import PostgresNIO

/// One pass of the scheduled clean-up, app by app: plans the renewals of renewing feeds' followers, ends stale
/// activities and feeds, activities renewals replaced and activities nearing the activity lifetime (ActivityKit's 8
/// hours; through the outbox, so the dispatcher sends the ends in order), marks ended
/// activities dismissed once their dismissal date passed, retires the channels of ended feeds, expires
/// push-to-start tokens not seen for long, and prunes old rows in bounded batches.
///
/// A pass is idempotent: a second one right after the first finds nothing to do. Two reapers may run at once (a
/// cron job beside `serve`): each app is worked on by one pass at a time, under a PostgreSQL advisory lock, and the
/// store's row locks and states keep an activity or a feed from being ended twice even without it.
package struct Reaper: Sendable {
    let database: PostgresClient
    /// The reaper's statements.
    let reaping: Reaping
    /// The apps' APNs clients, asked for only to delete channels.
    let appClients: any AppClientSource
    let policy: ReaperPolicy
    let logger: Logger

    /// - Parameters:
    ///   - database: The store.
    ///   - appClients: The apps' APNs clients, asked for only to delete channels.
    ///   - policy: The periods and margins.
    ///   - logger: Logs what failed.
    package init(database: PostgresClient, appClients: any AppClientSource, policy: ReaperPolicy = ReaperPolicy(), logger: Logger) {
        self.database = database
        self.reaping = Reaping(client: database, logger: logger)
        self.appClients = appClients
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
        if !dryRun {
            await self.pruneConsoleSessions()
            ReaperMetrics.recordRun(at: now)
        }
        return reports
    }

    /// Drops the console sessions that ended (``ConsoleSessions/pruneEnded()``); a failure is only logged.
    private func pruneConsoleSessions() async {
        do {
            let pruned = try await ConsoleSessions(client: self.database, logger: self.logger).pruneEnded()
            if pruned > 0 { self.logger.info("pruned ended console sessions", metadata: ["count": "\(pruned)"]) }
        } catch {
            self.logger.warning("could not prune console sessions", metadata: ["error": "\(Self.describe(error))"])
        }
    }

    /// Keeps the pass's summary on the app (the console's overview shows it); a failure to is only logged.
    private func remember(_ report: ReaperReport, of app: Reaping.App) async {
        guard !report.skipped else { return }
        do {
            try await self.reaping.recordPass(appID: app.id, summary: report.summary(dryRun: false))
        } catch {
            self.logger.warning("could not record the reaper's pass", metadata: ["app": "\(app.bundleID)", "error": "\(Self.describe(error))"])
        }
    }

    /// Every app, by bundle id and environment.
    func apps() async throws -> [Reaping.App] {
        try await self.reaping.apps()
    }

    /// The app's retention periods: its own, the policy's where it sets none.
    func retention(of app: Reaping.App) -> ReaperPolicy.Retention {
        let defaults = self.policy.retention
        return ReaperPolicy.Retention(
            updates: app.retainUpdatesDays.map(Duration.days) ?? defaults.updates,
            deliveries: app.retainDeliveriesDays.map(Duration.days) ?? defaults.deliveries,
            dismissedActivities: app.retainDismissedActivitiesDays.map(Duration.days) ?? defaults.dismissedActivities
        )
    }

    /// Every rule, under the app's advisory lock (held by a transaction that writes nothing).
    private func reap(_ app: Reaping.App, now: Int) async -> ReaperReport {
        do {
            // The lock holds until the rules are done; they work on other connections meanwhile.
            let report = try await self.reaping.whileHoldingAppLock(app.id) { await self.runRules(app, now: now) }
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

    private func runRules(_ app: Reaping.App, now: Int) async -> ReaperReport {
        var report = ReaperReport(bundleID: app.bundleID, environment: app.environment)
        await self.rule("ending stale activities and feeds", &report) { report in
            report.endedActivities += try await self.endStaleActivities(app, now: now)
            report.endedFeeds += try await self.endStaleFeeds(app, now: now)
        }
        await self.rule("planning renewals", &report) { report in
            report.plannedRenewals += try await self.planRenewals(app, dryRun: false)
        }
        await self.rule("ending renewed activities", &report) { report in
            report.endedActivities += try await self.endRenewedActivities(app)
        }
        await self.rule("ending activities near the activity lifetime", &report) { report in
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
        await self.rule("marking starts never reported as activities", &report) { _ in
            let cutoff = Double(now) - self.policy.startRegistrationTimeout.inSeconds
            _ = try await self.reaping.markUnregisteredStarts(app.id, startedBefore: cutoff, self.run(dryRun: false))
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
    private func preview(_ app: Reaping.App, now: Int) async -> ReaperReport {
        var report = ReaperReport(bundleID: app.bundleID, environment: app.environment)
        await self.rule("counting", &report) { report in
            report.endedActivities = try await self.reaping.staleActivityCount(app.id, now: now, staleGrace: self.policy.staleGrace)
            report.endedActivities += try await self.reaping.agingActivityCount(
                app.id,
                now: now,
                staleGrace: self.policy.staleGrace,
                startedBefore: self.agingCutoff(now)
            )
            report.endedFeeds = try await self.reaping.staleFeedCount(app.id, now: now, staleGrace: self.policy.staleGrace)
            report.plannedRenewals = try await self.planRenewals(app, dryRun: true)
            report.dismissedActivities = try await self.dismissActivities(app, now: now, dryRun: true)
            report.retiredChannels = try await self.reaping.channelsToRetireCount(app.id, endedBefore: self.retirementCutoff(now))
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

    /// How a rule's statement runs: counted in a dry run, else in batches of the policy's size.
    func run(dryRun: Bool) -> Reaping.Run {
        dryRun ? .count : .batches(of: self.policy.batchSize)
    }

    /// PostgreSQL's own message for its errors; the description for others.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return error.serverInfo?[.message] ?? "\(error.code)" }
        if let error = error as? PostgresTransactionError, let closureError = error.closureError { return Self.describe(closureError) }
        return "\(error)"
    }
}
