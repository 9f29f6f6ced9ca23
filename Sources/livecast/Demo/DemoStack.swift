import APNs
import APNsEmulator
import Crypto
import Foundation
import LivecastServer
import LivecastService
import LivecastStore
import LocalPostgres
import Logging
import Prometheus
import ServiceLifecycle

/// The demo's whole stack, started in order and stopped in reverse however the demo ends (Ctrl-C included): a
/// temporary PostgreSQL, the APNs emulator trusting a new signing key, and the server (the API and the dispatcher,
/// built as `serve` builds them) pointed at the emulator, with the ``DemoSession`` running beside it.
struct DemoStack: Service {
    let migrations: [Migration]
    let metrics: PrometheusCollectorRegistry
    let deviceCount: Int
    let keep: Bool
    let progress: DemoProgress
    let logger: Logger

    func run() async throws {
        let postgres = try await TemporaryPostgres.start()
        try await Self.withCleanup {
            self.progress.done("PostgreSQL", "\(postgres.version) on 127.0.0.1:\(postgres.port), in \(postgres.directory.path)")
            guard !Task.isShuttingDownGracefully else { throw DemoFailure("interrupted before the game ended") }
            let signingKey = P256.Signing.PrivateKey()
            var configuration = APNsEmulator.Configuration(
                trustedKeys: [TrustedKey(teamID: DemoApp.teamID, keyID: DemoApp.keyID, publicKey: signingKey.publicKey)]
            )
            // The data export's "today" runs a day ahead, so the game's pushes are yesterday's figures (DemoAppleFigures).
            configuration.dataExportClockOffset = 86400
            let emulator = try await APNsEmulator.start(configuration: configuration)
            let certificate = FileManager.default.temporaryDirectory.appendingPathComponent(
                "livecast-demo-\(UUID().uuidString.prefix(8).lowercased())-apns.pem"
            ).path
            try await Self.withCleanup {
                try emulator.certificatePEM.write(toFile: certificate, atomically: false, encoding: .utf8)
                self.progress.done(
                    "emulator",
                    "APNs emulator on localhost:\(emulator.pushPort) (pushes, broadcasts) and :\(emulator.managementPort) (channels), trusting a new signing key"
                )
                try await self.serve(postgres: postgres, emulator: emulator, certificate: certificate, signingKey: signingKey)
            } cleanup: {
                await emulator.shutdown()
                try? FileManager.default.removeItem(atPath: certificate)
            }
        } cleanup: {
            await postgres.stop()
        }
    }

    /// Runs the server (with the APNs clients and the dispatcher as its services) and the session until the session
    /// is done (or Ctrl-C).
    private func serve(postgres: TemporaryPostgres, emulator: APNsEmulator, certificate: String, signingKey: P256.Signing.PrivateKey) async throws {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let masterKey = MasterKey.random()
        let livecast = LivecastApplication(
            settings: .init(
                database: postgres.configuration,
                host: "127.0.0.1",
                port: 0,
                migrations: self.migrations,
                masterKey: masterKey,
                apnsOverrides: .init(
                    pushEndpoint: .init(host: "localhost", port: emulator.pushPort),
                    managementEndpoint: .init(host: "localhost", port: emulator.managementPort),
                    caFile: certificate
                ),
                // Generous: `--devices 1000` registers a thousand tokens as fast as it can, every phone from this
                // machine's one address.
                api: .init(rateLimit: .init(ratePerSecond: 1000, burst: 2000), clientLimits: ClientLimits(addressSharePercent: 100)),
                dispatchWorkers: 2
            ),
            metrics: self.metrics,
            logger: self.logger,
            onServerRunning: { port in
                portContinuation.yield(port)
                portContinuation.finish()
            }
        )
        let session = DemoSession(
            serverPort: ports,
            database: livecast.database,
            emulator: emulator,
            emulatorCertificate: certificate,
            masterKey: masterKey,
            signingKey: signingKey,
            deviceCount: self.deviceCount,
            keep: self.keep,
            progress: self.progress,
            logger: self.logger
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: livecast.application, serviceName: "server"),
                    .init(
                        service: session,
                        successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup
                    ),
                ],
                logger: self.logger
            )
        )
        try await group.run()
    }

    /// Runs `body`, then `cleanup` however `body` ends.
    private static func withCleanup<Result>(_ body: () async throws -> Result, cleanup: () async -> Void) async throws -> Result {
        let result: Result
        do {
            result = try await body()
        } catch {
            await cleanup()
            throw error
        }
        await cleanup()
        return result
    }
}
