import Foundation
import LivecastStore
import Logging
import ServiceLifecycle

/// The reaper and the channel reconciler run periodically inside `serve`. Every instance ticks; at each tick the one
/// that takes a PostgreSQL advisory lock (held by a transaction for the tick's length) runs a reaper pass, then
/// reconciles each app's channels in report-only mode (orphans are logged, never deleted here; registry channels
/// APNs no longer has are marked missing). The others skip that tick.
///
/// On graceful shutdown it stops waiting, or finishes the tick in progress, and returns.
package struct ReaperService: Service {
    private let reaper: Reaper
    private let interval: Duration

    /// - Parameters:
    ///   - reaper: The pass to run; its database and APNs clients serve the reconciler too, and its logger takes
    ///     the service's lines.
    ///   - interval: The time between ticks, from the end of one to the start of the next.
    package init(reaper: Reaper, interval: Duration) {
        self.reaper = reaper
        self.interval = interval
    }

    private var logger: Logger { self.reaper.logger }

    /// Waits an interval before the first tick, so a starting `serve` applies its migrations first.
    package func run() async throws {
        await periodically(every: self.interval) { await self.tick() }
    }

    /// One tick: the pass and the reconciliation, if this instance takes the lock.
    /// - Returns: Whether this instance ran them.
    @discardableResult
    package func tick() async -> Bool {
        do {
            return try await self.reaper.reaping.whileHoldingScheduleLock {
                await self.reap()
                await self.reconcile()
                return true
            } ?? false
        } catch {
            self.logger.error("the scheduled reaper could not run", metadata: ["error": "\(Reaper.describe(error))"])
            return false
        }
    }

    private func reap() async {
        do {
            for report in try await self.reaper.pass() {
                for failure in report.failures {
                    self.logger.error("reaper", metadata: ["app": "\(report.bundleID)", "failure": "\(failure)"])
                }
                if !report.isEmpty { self.logger.info("\(report.summary(dryRun: false))") }
            }
        } catch {
            self.logger.error("reaper pass failed", metadata: ["error": "\(Reaper.describe(error))"])
        }
    }

    private func reconcile() async {
        do {
            for app in try await self.reaper.appsWithChannels() {
                do {
                    let client = try await self.reaper.appClients.client(forApp: app.id)
                    let bundleID = client.bundleID
                    let result = try await ChannelReconciler(database: self.reaper.database, apns: client.client, logger: self.logger)
                        .reconcile(appID: app.id, bundleID: bundleID, environment: app.environment, deleteOrphans: false)
                    for finding in result.findings {
                        self.logger.warning("channel reconciliation: \(finding.line)", metadata: ["app": "\(bundleID)"])
                    }
                } catch {
                    self.logger.warning("channel reconciliation failed", metadata: ["app": "\(app.bundleID)", "error": "\(Reaper.describe(error))"])
                }
            }
        } catch {
            self.logger.error("channel reconciliation failed", metadata: ["error": "\(Reaper.describe(error))"])
        }
    }
}

extension Reaper {
    /// The apps that have ever had a channel recorded: the ones worth asking APNs about.
    func appsWithChannels() async throws -> [Reaping.App] {
        let channels = Channels(client: self.database, logger: self.logger)
        var apps: [Reaping.App] = []
        for app in try await self.apps() {
            if try await channels.anyRecorded(appID: app.id) { apps.append(app) }
        }
        return apps
    }
}
