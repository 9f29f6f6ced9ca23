import AsyncHTTPClient
package import Foundation
package import LivecastStore
package import Logging
import NIOCore
import NIOPosix
import NIOSSL
package import PostgresNIO
import ServiceLifecycle

/// Fetches Apple's daily figures for every app with data-export credentials: for each app, its device pushes
/// (`deliverymetrics`), its broadcasts as a whole (`broadcastapplicationmetric`) and each live or recently retired
/// channel's (`broadcastchannelmetrics`), through yesterday; on an export's first run from 30 days back, then from
/// the day before the last it holds (Apple may still revise it). Each export is requested, polled with backoff,
/// downloaded, read strictly and stored in one transaction; a failure is recorded on the export (and counted in
/// `/metrics`) and changes nothing stored before. Then Livecast's own figures are kept before the reaper prunes their
/// records (a week by default), and the days where Apple's figures and Livecast's diverge are flagged, each once, with
/// its event. It never touches sending.
package struct AppleMetricsJob: Sendable {
    /// How the job reaches Apple and judges days.
    package struct Settings: Sendable {
        /// Apple's data-export host. Defaults to `https://api.icloud.apple.com`.
        package var url: String
        /// A PEM file of certificates to trust besides the system's (the emulator's). Defaults to none.
        package var caFile: String?
        /// How far back a first export reaches; Apple allows 30 days. Defaults to `30`.
        package var backfillDays: Int
        /// The first wait between status polls, doubled each time up to ``maximumPollDelay``. Defaults to 2 s.
        package var firstPollDelay: Duration
        /// Defaults to a minute.
        package var maximumPollDelay: Duration
        /// How long an export may stay `PROCESSING` before it counts as failed. Defaults to 30 minutes.
        package var pollDeadline: Duration
        /// One HTTP request's limit. Defaults to 30 s.
        package var requestTimeout: Duration
        /// How far Apple's figures and Livecast's may differ, as a share of the larger, before a day is flagged.
        /// Defaults to `0.05`.
        package var threshold: Double
        /// The clock whose UTC day is "today": a test or the demo moves it to make yesterday happen. Defaults to
        /// the wall clock.
        package var now: @Sendable () -> Date

        package init(
            url: String = "https://api.icloud.apple.com",
            caFile: String? = nil,
            backfillDays: Int = 30,
            firstPollDelay: Duration = .seconds(2),
            maximumPollDelay: Duration = .seconds(60),
            pollDeadline: Duration = .seconds(1800),
            requestTimeout: Duration = .seconds(30),
            threshold: Double = 0.05,
            now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.url = url
            self.caFile = caFile
            self.backfillDays = backfillDays
            self.firstPollDelay = firstPollDelay
            self.maximumPollDelay = maximumPollDelay
            self.pollDeadline = pollDeadline
            self.requestTimeout = requestTimeout
            self.threshold = threshold
            self.now = now
        }
    }

    /// What one run did.
    package struct Outcome: Sendable, Hashable {
        /// Exports stored.
        package var stored = 0
        /// Exports that failed (each recorded on the export).
        package var failed = 0
        /// Days and subjects newly flagged.
        package var flagged = 0

        package init(stored: Int = 0, failed: Int = 0, flagged: Int = 0) {
            self.stored = stored
            self.failed = failed
            self.flagged = flagged
        }
    }

    let database: PostgresClient
    let masterKey: MasterKey?
    let settings: Settings
    let logger: Logger

    /// - Parameters:
    ///   - database: Where credentials, exports and Livecast's own records are.
    ///   - masterKey: Opens the tokens; without it nothing is fetched.
    package init(database: PostgresClient, masterKey: MasterKey?, settings: Settings, logger: Logger) {
        self.database = database
        self.masterKey = masterKey
        self.settings = settings
        self.logger = logger
    }

    /// Fetches every app's figures that are not stored yet, or one app's.
    package func run(appID: Int64? = nil) async throws -> Outcome {
        let credentials = AppleMetricsCredentials(client: self.database, logger: self.logger)
        let appIDs: [Int64]
        if let appID { appIDs = [appID] } else { appIDs = try await credentials.apps() }
        guard !appIDs.isEmpty else { return Outcome() }
        let exports = AppleMetricsExports(client: self.database, logger: self.logger)
        guard let masterKey = self.masterKey else {
            let message = "the data-export token is sealed with the master key, and this server has none: start it with --master-key-file"
            self.logger.error("Apple's figures are not fetched", metadata: ["error": "\(message)"])
            for appID in appIDs { try await exports.recordFailure(appID: appID, dataset: .deliveryMetrics, channelID: nil, error: message) }
            AppleMetricsMetrics.failing(try await exports.failingCount())
            return Outcome(failed: appIDs.count)
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = self.settings.caFile { tls.additionalTrustRoots = [.file(caFile)] }
        let configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .follow(max: 3, allowCycles: false))
        let http = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let baseURL = self.settings.url.hasSuffix("/") ? String(self.settings.url.dropLast()) : self.settings.url
        // Apps are fetched side by side, a few at a time, so one app's slow exports never hold another's.
        let outcome = await withTaskGroup(of: Outcome.self) { group in
            var pending = appIDs[...]
            for appID in pending.prefix(Self.appsAtOnce) {
                group.addTask { await self.fetch(appID: appID, http: http, baseURL: baseURL, masterKey: masterKey) }
            }
            pending = pending.dropFirst(Self.appsAtOnce)
            var total = Outcome()
            for await app in group {
                total = Outcome(stored: total.stored + app.stored, failed: total.failed + app.failed, flagged: total.flagged + app.flagged)
                if let next = pending.popFirst() {
                    group.addTask { await self.fetch(appID: next, http: http, baseURL: baseURL, masterKey: masterKey) }
                }
            }
            return total
        }
        try? await http.shutdown()
        AppleMetricsMetrics.failing(try await exports.failingCount())
        return outcome
    }

    /// Apps fetched at once.
    static let appsAtOnce = 4

    /// One app's exports; a failure before any export (its token cannot be opened) is recorded on its device-push
    /// export, so it shows in the app's record too.
    private func fetch(appID: Int64, http: HTTPClient, baseURL: String, masterKey: MasterKey) async -> Outcome {
        let exports = AppleMetricsExports(client: self.database, logger: self.logger)
        do {
            guard
                let opened = try await AppleMetricsCredentials(client: self.database, logger: self.logger).opened(appID: appID, masterKey: masterKey)
            else { return Outcome() }
            let client = AppleExportClient(
                http: http,
                baseURL: baseURL,
                credentials: opened,
                requestTimeout: self.settings.requestTimeout,
                downloadLimit: 16 << 20
            )
            return try await self.run(client, appID: appID)
        } catch {
            if Self.isStopping { return Outcome() }
            let message = (error as? StoreError)?.message ?? "\(error)"
            self.logger.error("Apple's figures of an app could not be fetched", metadata: ["app": "\(appID)", "error": "\(message)"])
            try? await exports.recordFailure(appID: appID, dataset: .deliveryMetrics, channelID: nil, error: message)
            return Outcome(failed: 1)
        }
    }

    private func run(_ client: AppleExportClient, appID: Int64) async throws -> Outcome {
        let days = ExportDays(today: self.settings.now(), backfill: self.settings.backfillDays)
        let exports = AppleMetricsExports(client: self.database, logger: self.logger)
        var wanted: [(AppleDataset, String?)] = [(.deliveryMetrics, nil), (.applicationMetrics, nil)]
        wanted += try await exports.channels(appID: appID, since: days.earliest).map { (.channelMetrics, $0) }
        var outcome = Outcome()
        for (dataset, channelID) in wanted {
            let through = try await exports.fetchedThrough(appID: appID, dataset: dataset, channelID: channelID)
            guard let range = days.range(after: through) else { continue }
            do {
                let rows = try await self.fetch(client, dataset, channelID: channelID, range: range)
                try await exports.store(rows, appID: appID, dataset: dataset, through: range.through)
                AppleMetricsMetrics.export(dataset, succeeded: true)
                outcome.stored += 1
            } catch {
                if Self.isStopping { throw error }
                let message = (error as? AppleExportError)?.description ?? "\(error)"
                self.logger.warning(
                    "an export of Apple's figures failed",
                    metadata: ["app": "\(appID)", "dataset": "\(dataset.rawValue)", "channel": "\(channelID ?? "")", "error": "\(message)"]
                )
                try await exports.recordFailure(appID: appID, dataset: dataset, channelID: channelID, error: message)
                AppleMetricsMetrics.export(dataset, succeeded: false)
                outcome.failed += 1
            }
        }
        let reports = DeliveryReports(client: self.database, logger: self.logger)
        try await reports.snapshot(appID: appID, from: days.earliest, to: days.yesterday)
        let report = try await reports.report(appID: appID, from: days.earliest, to: days.yesterday, threshold: self.settings.threshold)
        outcome.flagged = try await reports.flag(report, appID: appID)
        return outcome
    }

    /// One export: requested, polled with backoff until it is no longer processing, downloaded and read.
    private func fetch(
        _ client: AppleExportClient,
        _ dataset: AppleDataset,
        channelID: String?,
        range: ExportDays.Range
    ) async throws -> AppleExportRows {
        let statusURL = try await client.request(dataset, channelID: channelID, from: range.from, through: range.through)
        let clock = ContinuousClock()
        let deadline = clock.now + self.settings.pollDeadline
        var delay = self.settings.firstPollDelay
        while true {
            switch try await client.status(statusURL) {
            case .success(let dataURL):
                return try AppleExportCSV.rows(try await client.download(dataURL), dataset: dataset, channelID: channelID)
            case .unsuccessful(let status):
                throw AppleExportError("Apple's export ended \(status) (\(Self.meaning(status))); it is asked for again at the next run")
            case .processing:
                guard clock.now + delay < deadline else {
                    throw AppleExportError(
                        "Apple's export was still PROCESSING after \(self.settings.pollDeadline); it is asked for again at the next run"
                    )
                }
                // A graceful shutdown stops the wait; the export is asked for again at the next run.
                let wait = delay
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
                delay = min(delay * 2, self.settings.maximumPollDelay)
            }
        }
    }

    /// Whether the service is shutting down: what it was doing is not a failure of Apple's.
    private static var isStopping: Bool { Task.isCancelled || Task.isShuttingDownGracefully }

    private static func meaning(_ status: String) -> String {
        switch status {
        case "FAILED": "Apple could not make it"
        case "EXPIRED": "its download expired before it was read"
        default: "a status Apple's documentation does not name"
        }
    }
}
