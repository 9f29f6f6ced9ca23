package import APNs
import Crypto
import Foundation
import LivecastCore
package import LivecastStore
package import Logging
import ServiceLifecycle

/// One APNs client per app, made on first use from the app's stored credentials and environment, and kept; the
/// stored key is looked at again every ``keyRecheckInterval``, and a changed key gets a new client.
///
/// Apps whose signing key cannot be opened are reported at start-up (logged by bundle id) and counted by
/// ``unusableKeyCount`` for `/ready`; their work is held back (``unusableKeyReason``), and no other app waits.
///
/// Without overrides a client talks to Apple's hosts for the app's environment; the overrides point every app at
/// other hosts (the emulator, a proxy) and add a CA to trust.
///
/// A `Service`: run it in the service group, after the database it reads the apps from; on graceful shutdown it
/// closes every client it made.
package actor AppClients: AppClientSource, Service {
    /// Hosts and trust that replace Apple's for every app.
    package struct Overrides: Sendable {
        /// Device pushes and broadcasts, such as `https://localhost:2197`.
        package var pushEndpoint: APNsClient.Endpoint?
        /// Channel management.
        package var managementEndpoint: APNsClient.Endpoint?
        /// A PEM file of certificates to trust besides the system's.
        package var caFile: String?
        /// Connections per endpoint; APNsClient's default when `nil`.
        package var connectionsPerEndpoint: Int?
        /// How long a request may take; APNsClient's default (15 s) when `nil`.
        package var requestTimeout: Duration?

        package init(
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

    /// The reason work held back for an app whose signing key cannot be opened is given up with.
    package static let unusableKeyReason = "SigningKeyUnavailable"

    /// How often a kept client's stored key is compared with the one it signs with.
    package let keyRecheckInterval: Duration

    /// A client being made or made, with the key it signs with.
    private struct Entry {
        let making: Task<(client: AppClient, key: Data), any Error>
        var checkedAt: ContinuousClock.Instant
    }

    private let apps: Apps
    private let overrides: Overrides
    private let logger: Logger
    private var clients: [Int64: Entry] = [:]
    /// Apps whose signing key could not be opened, by id, with their bundle id.
    private var unusableKeys: [Int64: String] = [:]

    package init(apps: Apps, overrides: Overrides = Overrides(), keyRecheckInterval: Duration = .seconds(30), logger: Logger) {
        self.apps = apps
        self.overrides = overrides
        self.keyRecheckInterval = keyRecheckInterval
        self.logger = logger
    }

    /// How many apps' signing keys could not be opened when last tried.
    package var unusableKeyCount: Int { self.unusableKeys.count }

    /// Whether an app's signing key could not be opened when last tried.
    package func isUnusable(appID: Int64) -> Bool { self.unusableKeys[appID] != nil }

    /// The client of an app. - Throws: ``StoreError`` `notFound` for an unknown app, `invalid` for an unusable key.
    package func client(forApp appID: Int64) async throws -> AppClient {
        if var entry = self.clients[appID] {
            guard ContinuousClock.now - entry.checkedAt >= self.keyRecheckInterval else { return try await entry.making.value.client }
            entry.checkedAt = .now
            self.clients[appID] = entry
            if try await self.keyIsUnchanged(appID, entry) { return try await entry.making.value.client }
            self.logger.notice("an app's signing key changed; its APNs client is made again", metadata: ["app": "\(appID)"])
            // Until APNs accepts a push signed with the new key, the invalidation guard judges every token again.
            try await self.apps.forgetCredentialsProof(id: appID)
            await self.forget(appID: appID)
        }
        let making = Task { try await self.make(appID) }
        self.clients[appID] = Entry(making: making, checkedAt: .now)
        do {
            let made = try await making.value
            self.unusableKeys[appID] = nil
            return made.client
        } catch {
            self.clients[appID] = nil
            throw error
        }
    }

    /// Forgets an app's client (after its key changed, or the app was removed) and closes it.
    package func forget(appID: Int64) async {
        guard let existing = self.clients.removeValue(forKey: appID) else { return }
        await (try? existing.making.value)?.client.client.shutdown()
    }

    /// Reports the apps whose signing key cannot be opened, then waits for graceful shutdown (or cancellation) and
    /// closes every client.
    package func run() async {
        await self.reportUnusableKeys()
        try? await gracefulShutdown()
        await self.shutdown()
    }

    /// Closes every client; ``run()`` does this on graceful shutdown.
    package func shutdown() async {
        let all = self.clients.values
        self.clients = [:]
        for entry in all { await (try? entry.making.value)?.client.client.shutdown() }
    }

    /// Opens every app's key once, logging (by bundle id) and counting those that cannot be opened.
    /// The count changes once, after every key was tried, so `/ready` never shows a part of it.
    func reportUnusableKeys() async {
        guard let apps = try? await self.apps.list() else { return }
        var found: [Int64: String] = [:]
        defer { self.unusableKeys.merge(found) { _, new in new } }
        for app in apps {
            do {
                _ = try await self.apps.credentials(appID: app.id)
            } catch let error as StoreError {
                found[app.id] = app.bundleID
                self.logger.error(
                    "an app's signing key cannot be opened: its pushes are held back",
                    metadata: ["bundleId": "\(app.bundleID)", "environment": "\(app.environment)", "error": "\(error.message)"]
                )
            } catch {
                return
            }
        }
    }

    /// Whether the stored key is still the one the client signs with. - Throws: ``StoreError`` when it can no
    /// longer be opened (the client is forgotten).
    private func keyIsUnchanged(_ appID: Int64, _ entry: Entry) async throws -> Bool {
        guard let signing = try? await entry.making.value.key else { return false }
        do {
            return try await Self.keyData(self.apps.credentials(appID: appID)) == signing
        } catch let error as StoreError {
            await self.forget(appID: appID)
            self.unusableKeys[appID] = self.unusableKeys[appID] ?? "app \(appID)"
            throw error
        }
    }

    private static func keyData(_ credentials: Apps.Credentials) -> Data {
        Data((credentials.teamID + "/" + credentials.keyID + "/").utf8) + credentials.privateKey.rawRepresentation
    }

    private func make(_ appID: Int64) async throws -> (client: AppClient, key: Data) {
        guard let app = try await self.apps.app(id: appID) else { throw StoreError(.notFound, "no app \(appID)") }
        let stored: Apps.Credentials
        do {
            stored = try await self.apps.credentials(appID: appID)
        } catch let error as StoreError {
            self.unusableKeys[appID] = app.bundleID
            throw error
        }
        var configuration = APNsClient.Configuration(environment: app.environment)
        if let push = self.overrides.pushEndpoint {
            configuration.pushEndpoint = push
            configuration.broadcastEndpoint = push
        }
        if let management = self.overrides.managementEndpoint { configuration.managementEndpoint = management }
        if let caFile = self.overrides.caFile { configuration.additionalTrustRootFiles = [caFile] }
        if let connections = self.overrides.connectionsPerEndpoint { configuration.connectionsPerEndpoint = connections }
        if let timeout = self.overrides.requestTimeout { configuration.requestTimeout = timeout }
        let credentials = APNsCredentials(teamID: stored.teamID, keyID: stored.keyID, privateKey: stored.privateKey)
        let client = try APNsClient(configuration: configuration, credentials: credentials, logger: self.logger)
        return (AppClient(client: client, bundleID: app.bundleID, appID: appID), Self.keyData(stored))
    }
}
