package import Foundation
import Logging
import PostgresNIO

/// The public keys an app's backend signs identity assertions with: short-lived ES256 JWTs that let a client key's
/// registration name a user (`userId`). The admin registers each under the key id the JWT header's `kid` gives; two
/// or more live side by side during a rotation.
package struct IdentityKeys: DatabaseBacked {
    /// A registered key, as listed.
    package struct Key: Sendable, Hashable, Encodable {
        /// The id JWT headers name it by (`kid`).
        package var keyID: String
        /// The P-256 public key, PEM (`-----BEGIN PUBLIC KEY-----`).
        package var publicKey: String
        package var createdAt: Date

        private enum CodingKeys: String, CodingKey {
            case keyID = "keyId"
            case publicKey, createdAt
        }
    }

    /// The most keys one app may hold. Rotating needs two.
    package static let limit = 10

    /// Whether a key id is 1 to 64 ASCII letters, digits, `.`, `_` or `-` (as `identity_keys` checks it).
    package static func isValid(keyID: String) -> Bool {
        (1...64).contains(keyID.utf8.count) && keyID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Adds a key, or replaces the one of the same id.
    /// - Returns: The key as stored, and whether it is new (not a replacement).
    /// - Throws: ``StoreError`` `conflict` when the app holds ``limit`` keys already.
    package func put(appID: Int64, keyID: String, publicKey: String) async throws -> (key: Key, isNew: Bool) {
        let rows = try await self.client.guardedQuery(
            """
            INSERT INTO identity_keys (app_id, key_id, public_key_pem)
            SELECT \(appID), \(keyID), \(publicKey)
            WHERE EXISTS (SELECT 1 FROM identity_keys WHERE app_id = \(appID) AND key_id = \(keyID))
               OR (SELECT count(*) FROM identity_keys WHERE app_id = \(appID)) < \(Self.limit)
            ON CONFLICT (app_id, key_id) DO UPDATE SET public_key_pem = excluded.public_key_pem, created_at = now()
            RETURNING created_at, xmax = 0
            """,
            logger: self.logger
        )
        for try await (createdAt, isNew) in rows.decode((Date, Bool).self) {
            return (Key(keyID: keyID, publicKey: publicKey, createdAt: createdAt), isNew)
        }
        throw StoreError(.conflict, "this app holds \(Self.limit) identity keys, the most it may; delete one first", field: "keyId")
    }

    /// An app's keys, by key id.
    package func list(appID: Int64) async throws -> [Key] {
        let rows = try await self.client.guardedQuery(
            "SELECT key_id, public_key_pem, created_at FROM identity_keys WHERE app_id = \(appID) ORDER BY key_id",
            logger: self.logger
        )
        var keys: [Key] = []
        for try await (keyID, publicKey, createdAt) in rows.decode((String, String, Date).self) {
            keys.append(Key(keyID: keyID, publicKey: publicKey, createdAt: createdAt))
        }
        return keys
    }

    /// The PEM of an app's key, or `nil` when it has none of that id.
    package func publicKey(appID: Int64, keyID: String) async throws -> String? {
        let rows = try await self.client.guardedQuery(
            "SELECT public_key_pem FROM identity_keys WHERE app_id = \(appID) AND key_id = \(keyID)",
            logger: self.logger
        )
        for try await pem in rows.decode(String.self) { return pem }
        return nil
    }

    /// Removes a key: assertions it signed stop binding users at once.
    /// - Returns: Whether the app had it.
    package func delete(appID: Int64, keyID: String) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            "DELETE FROM identity_keys WHERE app_id = \(appID) AND key_id = \(keyID) RETURNING id",
            logger: self.logger
        )
        return !rows.isEmpty
    }
}
