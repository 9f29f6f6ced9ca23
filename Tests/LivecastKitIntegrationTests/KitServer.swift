import APNs
import APNsEmulator
import Foundation
import Hummingbird
import LivecastKit
import LivecastServer
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Prometheus

/// A real Livecast on a loopback port, as `livecast serve` builds it (``LivecastApplication``, dispatcher running),
/// over a fresh migrated database with `com.example.game` sending to the emulator, and a `client` key of the app.
struct KitServer: Sendable {
    let store: StoreFixture
    let emulator: EmulatorFixture
    /// `http://127.0.0.1:PORT`.
    let baseURL: URL
    /// The publishable key the app's LivecastKit uses.
    let clientKey: String
    /// Keys for the backend's and the operator's part (feeds, starts, updates), and the admin's (identity keys).
    let backendKey: String
    let operatorKey: String
    let adminKey: String

    var database: PostgresClient { self.store.client }

    /// Runs `body` with the server up; stops it after.
    /// - Parameters:
    ///   - deviceRateLimit: The rate limit of each device calling with a client key (a tight one answers `429` with
    ///     `Retry-After`).
    ///   - activitiesPerDevice: The running activities a client key's device may have (`409 device_limit_reached`
    ///     past it).
    static func with(
        _ name: String,
        deviceRateLimit: RateLimit = .init(ratePerSecond: 1000, burst: 2000),
        activitiesPerDevice: Int = 32,
        _ body: @Sendable (KitServer) async throws -> Void
    ) async throws {
        try await EmulatorFixture.with { emulator in
            try await StoreFixture.with(name) { store in
                try await store.client.query("UPDATE apps SET signing_key_path = \(emulator.key.path)")
                let keys = APIKeys(client: store.client, logger: store.logger)
                let clientKey = try await keys.create(appID: store.appID, role: .client).secret
                let backendKey = try await keys.create(appID: store.appID, role: .backend).secret
                let operatorKey = try await keys.create(appID: store.appID, role: .operator).secret
                let adminKey = try await keys.create(appID: store.appID, role: .admin).secret
                let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
                let livecast = LivecastApplication(
                    settings: .init(
                        database: store.configuration,
                        port: 0,
                        databaseWaitTimeout: .seconds(120),
                        migrations: try Migration.load(from: Fixtures.repositoryRoot.appendingPathComponent("sql").path),
                        apnsOverrides: .init(
                            pushEndpoint: .init(host: "localhost", port: emulator.emulator.pushPort),
                            managementEndpoint: .init(host: "localhost", port: emulator.emulator.managementPort),
                            caFile: emulator.curl.caFile,
                            requestTimeout: .seconds(60)
                        ),
                        api: .init(clientLimits: .init(perDevice: deviceRateLimit, activitiesPerDevice: activitiesPerDevice)),
                        dispatchWorkers: 2
                    ),
                    metrics: PrometheusCollectorRegistry(),
                    logger: store.logger,
                    onServerRunning: { port in
                        portSink.yield(port)
                        portSink.finish()
                    }
                )
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await livecast.application.runService() }
                    guard let port = await ports.first(where: { _ in true }) else { throw CancellationError() }
                    let server = KitServer(
                        store: store,
                        emulator: emulator,
                        baseURL: URL(string: "http://127.0.0.1:\(port)")!,
                        clientKey: clientKey,
                        backendKey: backendKey,
                        operatorKey: operatorKey,
                        adminKey: adminKey
                    )
                    do {
                        try await body(server)
                    } catch {
                        group.cancelAll()
                        throw error
                    }
                    group.cancelAll()
                }
            }
        }
    }

    /// A client of the app on a store directory, retrying fast.
    /// - Parameter now: The kit's clock (the real one by default).
    func client(
        storeDirectory: URL,
        baseURL: URL? = nil,
        key: String? = nil,
        deviceID: String? = nil,
        identifyGracePeriod: Duration = .seconds(60),
        now: @escaping @Sendable () -> Date = Date.init
    ) throws -> LivecastClient {
        var configuration = LivecastClient.Configuration(
            baseURL: baseURL ?? self.baseURL,
            bundleID: EmulatorFixture.bundleID,
            clientKey: key ?? self.clientKey,
            storeDirectory: storeDirectory
        )
        configuration.deviceID = deviceID
        configuration.osVersion = "18.2"
        configuration.now = now
        configuration.identifyGracePeriod = identifyGracePeriod
        configuration.retryPolicy = RetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(400))
        return try LivecastClient(configuration: configuration)
    }

    /// Sends a request as the app's backend or operator would, with curl: the status and the body.
    func call(_ method: String, _ path: String, key: String, body: String? = nil) async throws -> (status: Int, body: String) {
        var arguments = ["-s", "-o", "/dev/stdout", "-w", "\n%{http_code}", "-X", method, "-H", "Authorization: Bearer \(key)"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data", body] }
        let result = try await ExternalProcess.run("curl", arguments + ["\(self.baseURL.absoluteString)/v1/apps/\(EmulatorFixture.bundleID)\(path)"])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }

    /// The first value of a query.
    func value<Value: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: Value.Type) async throws -> Value? {
        for try await value in try await self.database.query(query).decode(Value.self) { return value }
        return nil
    }
}
