import APNs
import APNsEmulator
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import Metrics
import NIOCore
import PostgresNIO
import Prometheus
import Synchronization
import Testing

@testable import LivecastServer

/// A migrated database with two apps (`com.example.game`, the fixture's, and `com.example.other`), a key of each
/// role for the first and an admin key for the second, and the service built by the same composition root as
/// `livecast serve` (``LivecastApplication``, without dispatcher workers) over them.
struct APIFixture: Sendable {
    let store: StoreFixture
    let api: LivecastAPI
    let registry: PrometheusCollectorRegistry
    let otherAppID: Int64
    /// Keys of `com.example.game` by role.
    let keys: [APIKeys.Role: String]
    /// An admin key of `com.example.other`.
    let otherKey: String
    /// The metrics listener's port, once it listens.
    let metricsPort: PortBox
    /// The service's own pool (``LivecastApplication/database``), whose connections have the service's settings.
    let database: PostgresClient

    var client: PostgresClient { self.store.client }

    /// Runs `body` with a fresh fixture and the API under Hummingbird's router test client.
    /// - Parameters:
    ///   - emulator: Points the apps' APNs clients at this emulator (and signs with its key).
    ///   - configuration: The API's settings.
    ///   - testing: How requests reach the router: `.live` goes through a real socket, so the client has an address.
    ///   - settings: Changes the service's settings (timeouts, say) before it is built.
    ///   - logger: The service's logger. Defaults to none.
    static func with(
        _ name: String,
        emulator: EmulatorFixture? = nil,
        configuration: LivecastAPI.Configuration = .init(),
        testing: TestingSetup = .router,
        server: PostgresClient.Configuration? = nil,
        settings adjust: (inout LivecastApplication.Settings) -> Void = { _ in },
        logger: Logger? = nil,
        _ body: @Sendable (APIFixture, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await StoreFixture.with(name, server: server) { store in
            var overrides = AppClients.Overrides()
            if let emulator {
                try await store.client.query("UPDATE apps SET signing_key_path = \(emulator.key.path)")
                overrides = AppClients.Overrides(
                    pushEndpoint: .init(host: "localhost", port: emulator.emulator.pushPort),
                    managementEndpoint: .init(host: "localhost", port: emulator.emulator.managementPort),
                    caFile: emulator.curl.caFile,
                    requestTimeout: .seconds(60)  // the whole suite shares two cores
                )
            }
            let rows = try await store.client.query(
                "INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path) VALUES ('com.example.other', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/b.p8') RETURNING id"
            )
            var otherAppID: Int64 = 0
            for try await id in rows.decode(Int64.self) { otherAppID = id }
            let keyStore = APIKeys(client: store.client, logger: store.logger)
            var keys: [APIKeys.Role: String] = [:]
            for role in APIKeys.Role.allCases { keys[role] = try await keyStore.create(appID: store.appID, role: role).secret }
            let otherKey = try await keyStore.create(appID: otherAppID, role: .admin).secret
            let registry = PrometheusCollectorRegistry()
            var settings = LivecastApplication.Settings(
                database: store.configuration,
                metricsPort: 0,
                databaseWaitTimeout: .seconds(120),  // the whole suite shares two cores: a request may wait long
                migrations: try Migration.load(from: Fixtures.repositoryRoot.appendingPathComponent("sql").path),
                apnsOverrides: overrides,
                api: configuration,
                dispatchWorkers: 0
            )
            // Hummingbird's live test client holds one connection and never reconnects; on a starved runner a browser
            // test can leave it idle past the 60 s default, and the server's close fails its next request.
            settings.httpIdleTimeout = .seconds(900)
            adjust(&settings)
            let metricsPort = PortBox()
            let livecast = LivecastApplication(
                settings: settings,
                metrics: registry,
                logger: logger ?? store.logger,
                onMetricsServerRunning: { port in metricsPort.set(port) }
            )
            let fixture = APIFixture(
                store: store,
                api: livecast.api,
                registry: registry,
                otherAppID: otherAppID,
                keys: keys,
                otherKey: otherKey,
                metricsPort: metricsPort,
                database: livecast.database
            )
            try await withMetricsFactory(LivecastMetrics.factory(registry: registry)) {
                try await livecast.application.test(testing) { client in try await body(fixture, client) }
            }
        }
    }

    /// The key of a role of `com.example.game`.
    func key(_ role: APIKeys.Role) -> String { self.keys[role] ?? "" }

    /// `GET /metrics` on the metrics listener, with curl: the status and the body.
    func scrapeMetrics() async throws -> (status: String, text: String) {
        try await self.getFromMetricsListener("/metrics")
    }

    /// `GET /ready` on the metrics listener (with its detail), parsed.
    func readyWithDetail() async throws -> JSONValue {
        let (_, text) = try await self.getFromMetricsListener("/ready")
        return try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// A `GET` on the metrics listener, with curl: the status and the body.
    func getFromMetricsListener(_ path: String) async throws -> (status: String, text: String) {
        var port = self.metricsPort.port
        for _ in 0..<100 where port == nil {
            try await Task.sleep(for: .milliseconds(50))
            port = self.metricsPort.port
        }
        let url = "http://127.0.0.1:\(try #require(port))\(path)"
        let result = try await ExternalProcess.run("curl", ["-s", "-w", "\n%{http_code}", url])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    /// Rows in a table, to check that a refused request wrote nothing.
    func count(_ table: String) async throws -> Int {
        let rows = try await self.client.query(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)"))
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}

extension TestClientProtocol {
    /// Sends a request with a key (`nil`: none) and a JSON body given as text.
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        key: String?,
        body: String? = nil,
        headers: HTTPFields = [:]
    ) async throws -> TestResponse {
        try await self.execute(
            uri: uri,
            method: method,
            headers: .api(key: key, json: body != nil, adding: headers),
            body: body.map { ByteBuffer(string: $0) }
        )
    }
}

extension HTTPFields {
    /// `headers` with a key's `Authorization` (`nil`: none) and, for a JSON body, its `Content-Type`.
    static func api(key: String?, json: Bool, adding headers: HTTPFields = [:]) -> HTTPFields {
        var headers = headers
        if let key { headers[.authorization] = "Bearer \(key)" }
        if json { headers[.contentType] = "application/json" }
        return headers
    }
}

extension TestResponse {
    /// The body parsed as JSON.
    var json: JSONValue {
        (try? JSONDecoder().decode(JSONValue.self, from: Data(self.body.readableBytesView))) ?? .null
    }

    /// `error.code` of an error body.
    var errorCode: String? { self.json["error"]?["code"]?.stringValue }

    /// `error.field` of an error body.
    var errorField: String? { self.json["error"]?["field"]?.stringValue }

    var text: String { String(buffer: self.body) }
}

/// A port a server reports once it listens.
final class PortBox: Sendable {
    private let value = Mutex<Int?>(nil)

    var port: Int? { self.value.withLock { $0 } }

    func set(_ port: Int) { self.value.withLock { $0 = port } }
}
