import APNs
import Foundation
import Logging
import PostgresNIO

/// Apps and their APNs signing keys: sealed with the master key in the database, or referenced by path.
public struct Apps: Sendable {
    /// Where an app's `.p8` key lives.
    public enum SigningKey: Sendable {
        /// The PEM text, to be sealed with the master key and stored.
        case sealed(p8: String)
        /// A path the key is read from when needed (a mounted secret, for example).
        case path(String)
    }

    /// An app as listed; never its key.
    public struct App: Sendable, Hashable {
        public var id: Int64
        public var bundleID: String
        public var environment: String
        public var teamID: String
        public var keyID: String
        public var priority10HourlyCap: Int?
    }

    private let client: PostgresClient
    private let masterKey: MasterKey?
    private let logger: Logger

    /// - Parameter masterKey: Needed to add or use apps whose key is sealed.
    public init(client: PostgresClient, masterKey: MasterKey?, logger: Logger) {
        self.client = client
        self.masterKey = masterKey
        self.logger = logger
    }

    /// Adds an app. The key is checked to be a P-256 key before anything is stored.
    /// - Throws: ``StoreError``: `invalid` for a malformed team or key id, a key that is not P-256 PEM, or a sealed key
    ///   without a master key; `conflict` when the bundle id exists in that environment.
    public func add(
        bundleID: String,
        environment: APNsClient.Environment,
        teamID: String,
        keyID: String,
        signingKey: SigningKey,
        priority10HourlyCap: Int? = nil
    ) async throws -> App {
        let idPattern = /^[A-Z0-9]{10}$/
        guard teamID.wholeMatch(of: idPattern) != nil else { throw StoreError(.invalid, "the team id is 10 capitals or digits", field: "teamId") }
        guard keyID.wholeMatch(of: idPattern) != nil else { throw StoreError(.invalid, "the key id is 10 capitals or digits", field: "keyId") }
        guard !bundleID.isEmpty, !bundleID.contains(".push-type."), !bundleID.contains("/") else {
            throw StoreError(.invalid, "the bundle id must be a plain bundle id", field: "bundleId")
        }
        var sealed: Data?
        var path: String?
        switch signingKey {
        case .sealed(let pem):
            guard (try? APNsCredentials(teamID: teamID, keyID: keyID, p8: pem)) != nil else {
                throw StoreError(.invalid, "the key is not a P-256 private key in PEM (.p8) form", field: "key")
            }
            guard let masterKey = self.masterKey else {
                throw StoreError(.invalid, "a master key is needed to store signing keys", field: "masterKey")
            }
            sealed = masterKey.seal(Data(pem.utf8), context: Self.sealingContext(bundleID, environment.rawValue))
        case .path(let keyPath):
            guard (try? APNsCredentials(teamID: teamID, keyID: keyID, p8File: keyPath)) != nil else {
                throw StoreError(.invalid, "\(keyPath) is not a readable P-256 .p8 key", field: "key")
            }
            path = keyPath
        }
        do {
            let rows = try await self.client.query(
                """
                INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_sealed, signing_key_path, priority10_hourly_cap)
                VALUES (\(bundleID), \(environment.rawValue), \(teamID), \(keyID), \(sealed.map { ByteBuffer(bytes: $0) }), \(path), \(priority10HourlyCap))
                RETURNING id
                """,
                logger: self.logger
            )
            for try await id in rows.decode(Int64.self) {
                return App(id: id, bundleID: bundleID, environment: environment.rawValue, teamID: teamID, keyID: keyID, priority10HourlyCap: priority10HourlyCap)
            }
            throw StoreError(.notFound, "the app was not stored")
        } catch where StoreError.isUniqueViolation(error) {
            throw StoreError(.conflict, "\(bundleID) is already an app in \(environment.rawValue)", field: "bundleId")
        }
    }

    /// The signing credentials of an app, opened with the master key or read from the key's path.
    /// - Throws: ``StoreError`` `notFound`, or `invalid` when the key cannot be opened or read.
    public func credentials(appID: Int64) async throws -> APNsCredentials {
        let rows = try await self.client.query(
            "SELECT bundle_id, environment, team_id, key_id, signing_key_sealed, signing_key_path FROM apps WHERE id = \(appID)",
            logger: self.logger
        )
        for try await (bundleID, environment, teamID, keyID, sealed, path) in rows.decode((String, String, String, String, ByteBuffer?, String?).self) {
            if let sealed {
                guard let masterKey = self.masterKey else {
                    throw StoreError(.invalid, "a master key is needed to open the signing key", field: "masterKey")
                }
                let pem = try masterKey.open(Data(sealed.readableBytesView), context: Self.sealingContext(bundleID, environment))
                return try Self.credentials { () throws(APNsCredentials.KeyError) in
                    try APNsCredentials(teamID: teamID, keyID: keyID, p8: String(decoding: pem, as: UTF8.self))
                }
            }
            return try Self.credentials { () throws(APNsCredentials.KeyError) in
                try APNsCredentials(teamID: teamID, keyID: keyID, p8File: path ?? "")
            }
        }
        throw StoreError(.notFound, "no app \(appID)")
    }

    /// Every app, by bundle id and environment.
    public func list() async throws -> [App] {
        try await self.apps(
            "SELECT id, bundle_id, environment, team_id, key_id, priority10_hourly_cap FROM apps ORDER BY bundle_id, environment"
        )
    }

    /// One app by id, or `nil`.
    public func app(id: Int64) async throws -> App? {
        try await self.apps("SELECT id, bundle_id, environment, team_id, key_id, priority10_hourly_cap FROM apps WHERE id = \(id)").first
    }

    /// The apps with a bundle id: one per environment it is registered in.
    public func apps(bundleID: String) async throws -> [App] {
        try await self.apps(
            "SELECT id, bundle_id, environment, team_id, key_id, priority10_hourly_cap FROM apps WHERE bundle_id = \(bundleID) ORDER BY environment"
        )
    }

    /// Removes an app with everything it holds (tokens, activities, feeds, channel records, updates, API keys).
    /// Its channels are not deleted at APNs.
    /// - Returns: Whether there was such an app.
    public func remove(id: Int64) async throws -> Bool {
        let rows = try await self.client.query("DELETE FROM apps WHERE id = \(id) RETURNING id", logger: self.logger)
        for try await _ in rows.decode(Int64.self) { return true }
        return false
    }

    private func apps(_ query: PostgresQuery) async throws -> [App] {
        let rows = try await self.client.query(query, logger: self.logger)
        var apps: [App] = []
        for try await (id, bundleID, environment, teamID, keyID, cap) in rows.decode((Int64, String, String, String, String, Int?).self) {
            apps.append(App(id: id, bundleID: bundleID, environment: environment, teamID: teamID, keyID: keyID, priority10HourlyCap: cap))
        }
        return apps
    }

    /// Sealed keys are bound to their app, so a sealed key copied to another app's row does not open.
    private static func sealingContext(_ bundleID: String, _ environment: String) -> String {
        "livecast.app-key:\(bundleID):\(environment)"
    }

    private static func credentials(_ make: () throws(APNsCredentials.KeyError) -> APNsCredentials) throws(StoreError) -> APNsCredentials {
        do {
            return try make()
        } catch {
            throw StoreError(.invalid, "the app's signing key is unusable: \(error.message)", field: "key")
        }
    }
}
