import Crypto
package import Foundation
import Logging
import PostgresNIO

/// API keys: each belongs to one app and has one role. A key reads `lc_<prefix>_<secret>`; the store keeps the
/// prefix (to find the key) and the SHA-256 of the secret, never the secret, which is shown once at creation.
package struct APIKeys: DatabaseBacked {
    /// What a key may do. Roles are cumulative: a backend may do what a client may, an operator what a backend may,
    /// an admin what an operator may.
    package enum Role: String, Sendable, Hashable, CaseIterable, Comparable, Encodable {
        /// One device's own registrations, the device each request names (`Livecast-Device-ID`): its push-to-start
        /// tokens and its activities. A key an app embeds and publishes, so it passes no other role's check.
        case client
        /// Tokens, activities and updates.
        case backend
        /// Feeds and channels too.
        case `operator`
        /// The app itself and its keys too.
        case admin

        private var rank: Int {
            switch self {
            case .client: -1
            case .backend: 0
            case .operator: 1
            case .admin: 2
            }
        }

        package static func < (lhs: Role, rhs: Role) -> Bool { lhs.rank < rhs.rank }
    }

    /// A key as listed: never its secret.
    package struct Key: Sendable, Hashable, Encodable {
        package var id: Int64
        package var appID: Int64
        package var role: Role
        /// The public part of the key, `lc_<prefix>_…`.
        package var prefix: String
        package var createdAt: Date
        package var revokedAt: Date?

        /// The API's names (`GET /v1/apps/{bundleId}/keys`): its prefix, never its secret, nor its app's row id.
        private enum CodingKeys: String, CodingKey {
            case id = "keyId"
            case role, prefix, createdAt, revokedAt
        }
    }

    /// A key that authenticated: who is calling. It is encoded as the API shows it (`GET /v1/key`).
    package struct Caller: Sendable, Hashable, Encodable {
        package var keyID: Int64
        package var appID: Int64
        /// The bundle id of the key's app.
        package var bundleID: String
        package var role: Role

        /// The API's names: not the app's row id.
        private enum CodingKeys: String, CodingKey {
            case keyID = "keyId"
            case bundleID = "bundleId"
            case role
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Creates a key for an app.
    /// - Returns: The key as listed, and the full key text, which cannot be recovered later.
    /// - Throws: ``StoreError`` `notFound` for an unknown app.
    package func create(appID: Int64, role: Role) async throws -> (key: Key, secret: String) {
        let prefix = Self.hex(Self.randomBytes(6))
        let secret = Self.hex(Self.randomBytes(32))
        let rows = try await self.client.guardedQuery(
            """
            INSERT INTO api_keys (app_id, role, prefix, secret_hash)
            SELECT id, \(role.rawValue), \(prefix), \(ByteBuffer(bytes: Self.hash(secret))) FROM apps WHERE id = \(appID)
            RETURNING id, created_at
            """,
            logger: self.logger
        )
        for try await (id, createdAt) in rows.decode((Int64, Date).self) {
            let key = Key(id: id, appID: appID, role: role, prefix: prefix, createdAt: createdAt, revokedAt: nil)
            return (key, "lc_\(prefix)_\(secret)")
        }
        throw StoreError(.notFound, "no app \(appID)")
    }

    /// A presented key's public part (`lc_<prefix>_<secret>`): the prefix it is looked up by, or `nil` when the key
    /// is malformed.
    package static func prefix(of presented: String) -> String? {
        Self.parts(of: presented)?.prefix
    }

    private static func parts(of presented: String) -> (prefix: String, secret: String)? {
        let parts = presented.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "lc", !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        return (String(parts[1]), String(parts[2]))
    }

    /// The caller a presented key belongs to, or `nil` when the key is malformed, unknown, revoked or wrong.
    /// The secret's hash is compared in constant time.
    package func authenticate(_ presented: String) async throws -> Caller? {
        guard let (prefix, secret) = Self.parts(of: presented) else { return nil }
        let rows = try await self.client.guardedQuery(
            """
            SELECT k.id, k.app_id, a.bundle_id, k.role, k.secret_hash FROM api_keys k JOIN apps a ON a.id = k.app_id
            WHERE k.prefix = \(prefix) AND k.revoked_at IS NULL
            """,
            logger: self.logger
        )
        for try await (id, appID, bundleID, role, storedHash) in rows.decode((Int64, Int64, String, String, ByteBuffer).self) {
            guard Self.constantTimeEqual(Self.hash(secret), Array(storedHash.readableBytesView)), let role = Role(rawValue: role) else {
                return nil
            }
            return Caller(keyID: id, appID: appID, bundleID: bundleID, role: role)
        }
        return nil
    }

    /// Whether a key exists and is not revoked.
    package func isLive(keyID: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery("SELECT 1 FROM api_keys WHERE id = \(keyID) AND revoked_at IS NULL", logger: self.logger)
        return !rows.isEmpty
    }

    /// An app's keys, revoked ones included, oldest first.
    package func list(appID: Int64) async throws -> [Key] {
        let rows = try await self.client.guardedQuery(
            "SELECT id, role, prefix, created_at, revoked_at FROM api_keys WHERE app_id = \(appID) ORDER BY id",
            logger: self.logger
        )
        var keys: [Key] = []
        for try await (id, role, prefix, createdAt, revokedAt) in rows.decode((Int64, String, String, Date, Date?).self) {
            guard let role = Role(rawValue: role) else { continue }
            keys.append(Key(id: id, appID: appID, role: role, prefix: prefix, createdAt: createdAt, revokedAt: revokedAt))
        }
        return keys
    }

    static func hash(_ secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares every byte whatever the first difference, so the time taken does not tell how much matched.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
