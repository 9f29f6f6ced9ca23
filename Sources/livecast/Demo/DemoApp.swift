import APNs
import Crypto
import LivecastCore
import LivecastStore
import Logging
import PostgresNIO

/// The demo's app as an operator would set it up: `com.example.game` in sandbox with its signing key sealed by the
/// master key, and one API key each for the iPhones' app (client), the backend and the operator.
struct DemoApp: Sendable {
    static let bundleID = "com.example.game"
    static let teamID = "DEMOTEAM01"
    static let keyID = "DEMOKEY001"

    /// `lc_…` with the client role, which the app publishes: each iPhone's own tokens and activities.
    let clientKey: String
    /// `lc_…` with the backend role: tokens, activities, updates.
    let backendKey: String
    /// `lc_…` with the operator role: feeds and channels too.
    let operatorKey: String

    /// Adds the app and makes its keys. - Throws: ``StoreError`` or PostgreSQL's error.
    static func create(database: PostgresClient, masterKey: MasterKey, signingKey: P256.Signing.PrivateKey, logger: Logger) async throws -> DemoApp {
        let app = try await Apps(client: database, masterKey: masterKey, logger: logger).add(
            bundleID: Self.bundleID,
            environment: .sandbox,
            teamID: Self.teamID,
            keyID: Self.keyID,
            signingKey: .sealed(p8: signingKey.pemRepresentation)
        )
        let keys = APIKeys(client: database, logger: logger)
        return DemoApp(
            clientKey: try await keys.create(appID: app.id, role: .client).secret,
            backendKey: try await keys.create(appID: app.id, role: .backend).secret,
            operatorKey: try await keys.create(appID: app.id, role: .operator).secret
        )
    }
}
