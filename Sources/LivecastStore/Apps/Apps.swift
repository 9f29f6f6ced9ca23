package import Crypto
import Foundation
package import LivecastCore
import Logging
package import PostgresNIO

/// Apps and their APNs signing keys: sealed with the master key in the database, or referenced by path.
package struct Apps: Sendable {
    /// Where an app's `.p8` key lives.
    package enum SigningKey: Sendable {
        /// The PEM text, to be sealed with the master key and stored.
        case sealed(p8: String)
        /// A path the key is read from when needed (a mounted secret, for example).
        case path(String)
    }

    /// An app as listed; never its key. It is encoded as the API shows it (`GET /v1/apps/{bundleId}`), without its
    /// row id.
    package struct App: Sendable, Hashable, Encodable {
        package var id: Int64
        package var bundleID: String
        package var environment: APNsEnvironment
        package var teamID: String
        package var keyID: String
        package var priority10HourlyCap: Int?
        /// Since when and why the invalidation guard holds its sending, if it does.
        package var sendingHeld: SendingHold?

        /// The API's names.
        private enum CodingKeys: String, CodingKey {
            case bundleID = "bundleId"
            case environment
            case teamID = "teamId"
            case keyID = "keyId"
            case priority10HourlyCap, sendingHeld
        }
    }

    /// The invalidation guard's hold on an app's sending.
    package struct SendingHold: Sendable, Hashable, Encodable {
        /// UNIX seconds.
        package var since: Int64
        package var reason: String
    }

    /// An app's signing credentials, opened: what its provider tokens are signed with. Never logged.
    package struct Credentials: Sendable, CustomStringConvertible {
        /// The 10-character team id.
        package var teamID: String
        /// The 10-character key id.
        package var keyID: String
        /// The `.p8` key.
        package var privateKey: P256.Signing.PrivateKey

        package var description: String { "Apps.Credentials(teamID: \(self.teamID), keyID: \(self.keyID), key: <redacted>)" }
    }

    let client: PostgresClient
    private let masterKey: MasterKey?
    let logger: Logger

    /// - Parameter masterKey: Needed to add or use apps whose key is sealed.
    package init(client: PostgresClient, masterKey: MasterKey?, logger: Logger) {
        self.client = client
        self.masterKey = masterKey
        self.logger = logger
    }

    /// The same apps logging to `logger`: a route passes its request's logger, so that the log lines carry the
    /// request id.
    package func logging(to logger: Logger) -> Apps {
        Apps(client: self.client, masterKey: self.masterKey, logger: logger)
    }

    /// Adds an app. The key is checked to be a P-256 key before anything is stored.
    /// - Throws: ``StoreError``: `invalid` for a malformed team or key id, a key that is not P-256 PEM, or a sealed key
    ///   without a master key; `conflict` when the bundle id exists in that environment.
    package func add(
        bundleID: String,
        environment: APNsEnvironment,
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
            guard (try? Self.privateKey(pem: pem)) != nil else {
                throw StoreError(.invalid, "the key is not a P-256 private key in PEM (.p8) form", field: "key")
            }
            guard let masterKey = self.masterKey else {
                throw StoreError(.invalid, "a master key is needed to store signing keys", field: "masterKey")
            }
            sealed = masterKey.seal(Data(pem.utf8), context: Self.sealingContext(bundleID, environment.rawValue))
        case .path(let keyPath):
            guard (try? Self.privateKey(file: keyPath)) != nil else {
                throw StoreError(.invalid, "\(keyPath) is not a readable P-256 .p8 key", field: "key")
            }
            path = keyPath
        }
        do {
            let rows = try await self.client.guardedQuery(
                """
                INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_sealed, signing_key_path, priority10_hourly_cap)
                VALUES (\(bundleID), \(environment), \(teamID), \(keyID), \(sealed.map { ByteBuffer(bytes: $0) }), \(path), \(priority10HourlyCap))
                RETURNING id
                """,
                logger: self.logger
            )
            for try await id in rows.decode(Int64.self) {
                return App(
                    id: id,
                    bundleID: bundleID,
                    environment: environment,
                    teamID: teamID,
                    keyID: keyID,
                    priority10HourlyCap: priority10HourlyCap
                )
            }
            throw StoreError(.notFound, "the app was not stored")
        } catch  where StoreError.isUniqueViolation(error) {
            throw StoreError(.conflict, "\(bundleID) is already an app in \(environment.rawValue)", field: "bundleId")
        }
    }

    /// The signing credentials of an app, opened with the master key or read from the key's path.
    /// - Throws: ``StoreError`` `notFound`, or `invalid` when the key cannot be opened or read.
    package func credentials(appID: Int64) async throws -> Credentials {
        let rows = try await self.client.guardedQuery(
            "SELECT bundle_id, environment, team_id, key_id, signing_key_sealed, signing_key_path FROM apps WHERE id = \(appID)",
            logger: self.logger
        )
        for try await (bundleID, environment, teamID, keyID, sealed, path) in rows.decode((String, String, String, String, ByteBuffer?, String?).self)
        {
            let privateKey: P256.Signing.PrivateKey
            if let sealed {
                guard let masterKey = self.masterKey else {
                    throw StoreError(.invalid, "a master key is needed to open the signing key", field: "masterKey")
                }
                let pem = try masterKey.open(Data(sealed.readableBytesView), context: Self.sealingContext(bundleID, environment))
                privateKey = try Self.privateKey(pem: String(decoding: pem, as: UTF8.self))
            } else {
                privateKey = try self.privateKey(file: path ?? "", bundleID: bundleID)
            }
            return Credentials(teamID: teamID, keyID: keyID, privateKey: privateKey)
        }
        throw StoreError(.notFound, "no app \(appID)")
    }

    /// Every app, by bundle id and environment.
    package func list() async throws -> [App] {
        try await self.apps("SELECT \(unescaped: Self.columns) FROM apps ORDER BY bundle_id, environment")
    }

    /// The apps that have recorded a channel (any state), by bundle id and environment: those a reconciliation of
    /// every app compares with APNs.
    package func withChannels() async throws -> [App] {
        try await self.apps(
            """
            SELECT \(unescaped: Self.columns) FROM apps WHERE EXISTS (SELECT 1 FROM channels c WHERE c.app_id = apps.id)
            ORDER BY bundle_id, environment
            """
        )
    }

    /// One app by id, or `nil`.
    package func app(id: Int64) async throws -> App? {
        try await self.apps("SELECT \(unescaped: Self.columns) FROM apps WHERE id = \(id)").first
    }

    /// The apps with a bundle id: one per environment it is registered in.
    package func apps(bundleID: String) async throws -> [App] {
        try await self.apps("SELECT \(unescaped: Self.columns) FROM apps WHERE bundle_id = \(bundleID) ORDER BY environment")
    }

    /// Removes an app with everything it holds (tokens, activities, feeds, channel records, updates, API keys).
    /// Its channels are not deleted at APNs.
    /// - Returns: Whether there was such an app.
    package func remove(id: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery("DELETE FROM apps WHERE id = \(id) RETURNING id", logger: self.logger)
        return !rows.isEmpty
    }

    /// Holds an app's sending, for `reason`, until an operator resumes it (the invalidation guard tripped); an app
    /// held already keeps its first reason.
    package func holdSending(id: Int64, reason: String) async throws {
        try await self.client.guardedQuery(
            "UPDATE apps SET sending_held_at = now(), sending_held_reason = \(reason) WHERE id = \(id) AND sending_held_at IS NULL",
            logger: self.logger
        )
    }

    /// Lets an app whose sending the invalidation guard held send again; what it owes goes out. An app whose
    /// credentials were in doubt (``doubtCredentials(id:reason:)``) is cleared too, and the pushes that awaited their
    /// proof go again at once: an admin says the environment or key was put right.
    /// - Returns: Whether its sending was held or its credentials in doubt.
    package func resumeSending(id: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            WITH resumed AS (
                UPDATE apps SET sending_held_at = NULL, sending_held_reason = NULL, credentials_doubt = NULL, credentials_doubt_at = NULL
                WHERE id = \(id) AND (sending_held_at IS NOT NULL OR credentials_doubt IS NOT NULL)
                RETURNING id
            ), released AS (
                UPDATE owed_pushes SET awaits_proof = false, not_before = now() WHERE app_id IN (SELECT id FROM resumed) AND awaits_proof
            )
            SELECT id FROM resumed
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// How many apps' sending the invalidation guard holds.
    package func heldCount() async throws -> Int {
        let rows = try await self.client.guardedQuery("SELECT count(*)::int FROM apps WHERE sending_held_at IS NOT NULL", logger: self.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    private static let columns =
        "id, bundle_id, environment, team_id, key_id, priority10_hourly_cap, extract(epoch FROM sending_held_at)::bigint, sending_held_reason"

    private func apps(_ query: PostgresQuery) async throws -> [App] {
        let rows = try await self.client.guardedQuery(query, logger: self.logger)
        var apps: [App] = []
        for try await (id, bundleID, environment, teamID, keyID, cap, heldSince, heldReason) in rows.decode(
            (Int64, String, APNsEnvironment, String, String, Int?, Int64?, String?).self
        ) {
            var app = App(id: id, bundleID: bundleID, environment: environment, teamID: teamID, keyID: keyID, priority10HourlyCap: cap)
            if let heldSince { app.sendingHeld = SendingHold(since: heldSince, reason: heldReason ?? "") }
            apps.append(app)
        }
        return apps
    }

    /// Sealed keys are bound to their app, so a sealed key copied to another app's row does not open.
    private static func sealingContext(_ bundleID: String, _ environment: String) -> String {
        "livecast.app-key:\(bundleID):\(environment)"
    }

    /// A `.p8` key from its PEM text. - Throws: ``StoreError`` `invalid` when it is not a P-256 private key.
    private static func privateKey(pem: String) throws(StoreError) -> P256.Signing.PrivateKey {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) else {
            throw StoreError(.invalid, "the app's signing key is unusable: not a P-256 private key in PEM (.p8) form", field: "key")
        }
        return key
    }

    /// An app's `.p8` key from its file. The path goes to the operator's log only: the error may reach the app's API
    /// clients. - Throws: ``StoreError`` `invalid` when it cannot be read or holds no P-256 key.
    private func privateKey(file path: String, bundleID: String) throws(StoreError) -> P256.Signing.PrivateKey {
        let result = Result { () throws(StoreError) in try Self.privateKey(file: path) }
        if case .failure(let error) = result {
            self.logger.error(
                "An app's signing key file is unusable",
                metadata: ["app.bundle_id": "\(bundleID)", "key.path": "\(path)", "error.message": "\(error.message)"]
            )
        }
        return try result.get()
    }

    /// A `.p8` key from a file. - Throws: ``StoreError`` `invalid` when it cannot be read or holds no P-256 key; the
    /// message does not name the file.
    private static func privateKey(file path: String) throws(StoreError) -> P256.Signing.PrivateKey {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw StoreError(.invalid, "the app's signing key is unusable: its key file cannot be read", field: "key")
        }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: text) else {
            throw StoreError(.invalid, "the app's signing key is unusable: its key file holds no P-256 private key in PEM (.p8) form", field: "key")
        }
        return key
    }
}
