import APNsEmulator
import ArgumentParser
import Crypto
import Foundation
import LivecastKit
import LivecastStore
import Logging
import PostgresNIO
import ServiceLifecycle

/// The demo's work against the running server, a service beside it: once the server listens, sets up the app,
/// plays the game, and prints what the devices show and what the event feed told the backend; kept, prints how to try the API and waits for Ctrl-C.
///
/// Returning shuts the server down. - Throws: `ExitCode.failure` when a device ends up wrong.
struct DemoSession: Service {
    /// The server's port, once it listens.
    let serverPort: AsyncStream<Int>
    let database: PostgresClient
    let emulator: APNsEmulator
    /// The emulator's certificate (PEM), for `curl --cacert`.
    let emulatorCertificate: String
    let masterKey: MasterKey
    let signingKey: P256.Signing.PrivateKey
    let deviceCount: Int
    let keep: Bool
    let progress: DemoProgress
    let logger: Logger

    func run() async throws {
        let (port, app, report): (Int, DemoApp, DemoReport)
        do {
            (port, app, report) = try await cancelWhenGracefulShutdown { try await self.play() }
        } catch  where Task.isShuttingDownGracefully {
            throw DemoFailure("interrupted before the game ended")
        }
        self.progress.show("\n\(report.table)\n")
        let failures = report.failures
        if failures.isEmpty {
            self.progress.show(
                "✓ every device shows \(DemoGame.fullTime.text), ended, leaving the Lock Screen at \(DemoReport.clockTime(report.expected.dismissalDate)); none was sent an older update"
            )
        } else {
            for failure in failures { self.progress.show("✗ \(failure)") }
        }
        if self.keep {
            let figures = DemoAppleFigures(
                database: self.database,
                emulator: self.emulator,
                emulatorCertificate: self.emulatorCertificate,
                masterKey: self.masterKey,
                logger: self.logger
            )
            self.progress.done("Apple's figures", try await figures.fetch())
            self.progress.show(
                DemoExamples(serverPort: port, app: app, emulatorPushPort: self.emulator.pushPort, emulatorCertificate: self.emulatorCertificate).text
            )
            try? await gracefulShutdown()
        }
        if !failures.isEmpty { throw ExitCode.failure }
    }

    private func play() async throws -> (Int, DemoApp, DemoReport) {
        guard let port = await self.serverPort.first(where: { _ in true }) else { throw CancellationError() }
        self.progress.done("server", "Livecast on http://127.0.0.1:\(port): migrations applied, dispatcher running, APNs at the emulator")
        let app = try await DemoApp.create(database: self.database, masterKey: self.masterKey, signingKey: self.signingKey, logger: self.logger)
        self.progress.done("app", "\(DemoApp.bundleID) (sandbox), signing key sealed with a new master key; client, backend and operator API keys")
        let phones = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-demo-\(UUID().uuidString.prefix(8).lowercased())-phones")
        defer { try? FileManager.default.removeItem(at: phones) }
        let api = DemoAPIClient(baseURL: "http://127.0.0.1:\(port)", bundleID: DemoApp.bundleID)
        let game = DemoGame(
            api: api,
            emulator: self.emulator,
            app: app,
            phoneConfiguration: LivecastClient.Configuration(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!,
                bundleID: DemoApp.bundleID,
                clientKey: app.clientKey,
                storeDirectory: phones
            ),
            deviceCount: self.deviceCount,
            progress: self.progress
        )
        let report = try await game.play()
        // What a backend hears of the game: the event feed, as it would poll it.
        let events = try await DemoEvents(api: api, backendKey: app.backendKey).readUntilTheEndIsReported()
        self.progress.done("events", "GET /v1/apps/\(DemoApp.bundleID)/events → \(DemoEvents.summary(events))")
        return (port, app, report)
    }
}
