import APNs
import LivecastCore
import LivecastStore
import Logging
import ServiceLifecycle

/// One APNs client per app, made on first use from the app's stored credentials and environment, and kept.
///
/// Without overrides a client talks to Apple's hosts for the app's environment; the overrides point every app at
/// other hosts (the emulator, a proxy) and add a CA to trust.
///
/// A `Service`: run it in the service group, after the database it reads the apps from; on graceful shutdown it
/// closes every client it made.
public actor AppClients: Service {
    /// Hosts and trust that replace Apple's for every app.
    public struct Overrides: Sendable {
        /// Device pushes and broadcasts, such as `https://localhost:2197`.
        public var pushEndpoint: APNsClient.Endpoint?
        /// Channel management.
        public var managementEndpoint: APNsClient.Endpoint?
        /// A PEM file of certificates to trust besides the system's.
        public var caFile: String?
        /// Connections per endpoint; APNsClient's default when `nil`.
        public var connectionsPerEndpoint: Int?
        /// How long a request may take; APNsClient's default (15 s) when `nil`.
        public var requestTimeout: Duration?

        public init(
            pushEndpoint: APNsClient.Endpoint? = nil,
            managementEndpoint: APNsClient.Endpoint? = nil,
            caFile: String? = nil,
            connectionsPerEndpoint: Int? = nil,
            requestTimeout: Duration? = nil
        ) {
            self.pushEndpoint = pushEndpoint
            self.managementEndpoint = managementEndpoint
            self.caFile = caFile
            self.connectionsPerEndpoint = connectionsPerEndpoint
            self.requestTimeout = requestTimeout
        }
    }

    /// An app's client and bundle id.
    public struct AppClient: Sendable {
        public let client: APNsClient
        public let bundleID: String
    }

    private let apps: Apps
    private let overrides: Overrides
    private let logger: Logger
    private var clients: [Int64: Task<AppClient, any Error>] = [:]

    public init(apps: Apps, overrides: Overrides = Overrides(), logger: Logger) {
        self.apps = apps
        self.overrides = overrides
        self.logger = logger
    }

    /// The client of an app. - Throws: ``StoreError`` `notFound` for an unknown app, `invalid` for an unusable key.
    public func client(forApp appID: Int64) async throws -> AppClient {
        if let existing = self.clients[appID] { return try await existing.value }
        let making = Task { try await self.make(appID) }
        self.clients[appID] = making
        do {
            return try await making.value
        } catch {
            self.clients[appID] = nil
            throw error
        }
    }

    /// Forgets an app's client (after its key changed, or the app was removed) and closes it.
    public func forget(appID: Int64) async {
        guard let existing = self.clients.removeValue(forKey: appID) else { return }
        await (try? existing.value)?.client.shutdown()
    }

    /// Waits for graceful shutdown (or cancellation), then closes every client.
    public func run() async {
        try? await gracefulShutdown()
        await self.shutdown()
    }

    /// Closes every client; ``run()`` does this on graceful shutdown.
    public func shutdown() async {
        let all = self.clients.values
        self.clients = [:]
        for client in all { await (try? client.value)?.client.shutdown() }
    }

    private func make(_ appID: Int64) async throws -> AppClient {
        guard let app = try await self.apps.app(id: appID) else { throw StoreError(.notFound, "no app \(appID)") }
        var configuration = APNsClient.Configuration(environment: APNsEnvironment(rawValue: app.environment) ?? .sandbox)
        if let push = self.overrides.pushEndpoint {
            configuration.pushEndpoint = push
            configuration.broadcastEndpoint = push
        }
        if let management = self.overrides.managementEndpoint { configuration.managementEndpoint = management }
        if let caFile = self.overrides.caFile { configuration.additionalTrustRootFiles = [caFile] }
        if let connections = self.overrides.connectionsPerEndpoint { configuration.connectionsPerEndpoint = connections }
        if let timeout = self.overrides.requestTimeout { configuration.requestTimeout = timeout }
        let stored = try await self.apps.credentials(appID: appID)
        let credentials = APNsCredentials(teamID: stored.teamID, keyID: stored.keyID, privateKey: stored.privateKey)
        let client = try APNsClient(configuration: configuration, credentials: credentials, logger: self.logger)
        return AppClient(client: client, bundleID: app.bundleID)
    }
}
