import APNsEmulator
import Foundation
import LivecastService
import LivecastStore
import Logging
import PostgresNIO

/// The demo's last step with `--keep`: Apple's figures fetched from the emulator's data export (which counts what its
/// iPhones did) with the app's data-export credentials, as `serve`'s daily job fetches them from Apple, and flagged
/// where they differ from Livecast's. The export's clock runs a day ahead on both sides, so today counts as the
/// yesterday Apple reports.
struct DemoAppleFigures {
    let database: PostgresClient
    let emulator: APNsEmulator
    let emulatorCertificate: String
    let masterKey: MasterKey
    let logger: Logger

    /// Stores the credentials and runs the job once. - Returns: What it did, in a line.
    func fetch() async throws -> String {
        let token = "demo-" + UUID().uuidString.lowercased()
        self.emulator.addDataExportToken(DataExportToken(token: token, teamID: DemoApp.teamID, bundleID: DemoApp.bundleID))
        let apps = try await Apps(client: self.database, masterKey: nil, logger: self.logger).apps(bundleID: DemoApp.bundleID)
        guard let app = apps.first else { throw DemoFailure("the demo's app is gone") }
        _ = try await AppleMetricsCredentials(client: self.database, logger: self.logger).set(
            appID: app.id,
            teamID: DemoApp.teamID,
            appleAppID: DemoApp.bundleID,
            token: token,
            masterKey: self.masterKey
        )
        let settings = AppleMetricsJob.Settings(
            url: "https://localhost:\(self.emulator.pushPort)",
            caFile: self.emulatorCertificate,
            firstPollDelay: .milliseconds(100),
            now: { Date().addingTimeInterval(86400) }
        )
        let job = AppleMetricsJob(database: self.database, masterKey: self.masterKey, settings: settings, logger: self.logger)
        let outcome = try await job.run(appID: app.id)
        return "\(outcome.stored) exports from the emulator's data export, \(outcome.failed) failed, \(outcome.flagged) flagged → "
            + "GET /v1/apps/\(DemoApp.bundleID)/delivery-report"
    }
}
