package import Foundation
package import Logging
package import PostgresNIO

/// The operator console's sign-ins. The browser holds a random session token in a cookie; PostgreSQL holds only its
/// SHA-256, the API key it was opened with and the session's CSRF token, so any instance serves any session and a
/// database dump opens none. A session ends at sign-out, at its expiry, after ``idleTimeout`` unused, or as soon as
/// its key is revoked.
package struct ConsoleSessions: DatabaseBacked {
    /// How long a session lasts from sign-in: a working day.
    package static let lifetime: Duration = .seconds(12 * 3600)
    /// How long a session may go unused before it ends, unless set otherwise: 30 minutes.
    package static let defaultIdleTimeout: Duration = .seconds(1800)
    /// How often a session's last use is written: at most once a minute, so page views are not each a write.
    static let touchInterval = 60

    /// An open session: who it acts as, and the token its forms carry.
    package struct Session: Sendable, Hashable {
        /// The SHA-256 of the session's token, which names it in PostgreSQL (not a secret: it opens nothing).
        package var tokenHash: [UInt8]
        package var caller: APIKeys.Caller
        /// The token every state-changing form of the session must send back (`csrf`).
        package var csrfToken: String
        package var expiresAt: Date
    }

    package let database: Database
    /// How long a session may go unused before it ends. Defaults to ``defaultIdleTimeout``.
    package var idleTimeout: Duration = Self.defaultIdleTimeout

    package init(database: Database) { self.database = database }

    /// Sessions that end after `idleTimeout` unused.
    package init(client: PostgresClient, idleTimeout: Duration, logger: Logger) {
        self.init(database: Database(client: client, logger: logger))
        self.idleTimeout = idleTimeout
    }

    /// Opens a session for a key that authenticated.
    /// - Returns: The token to put in the browser's cookie (never stored), and the session; `nil` when the key was
    ///   revoked meanwhile.
    package func open(keyID: Int64) async throws -> (token: String, session: Session)? {
        let token = Self.newToken()
        let csrfToken = Self.newToken()
        let lifetime = Int(Self.lifetime.components.seconds)
        try await self.client.guardedQuery(
            """
            INSERT INTO console_sessions (token_hash, key_id, csrf_token, expires_at)
            VALUES (\(ByteBuffer(bytes: APIKeys.hash(token))), \(keyID), \(csrfToken), now() + make_interval(secs => \(lifetime)))
            """,
            logger: self.logger
        )
        return try await self.session(token: token).map { (token, $0) }
    }

    /// Whether a cookie's value could be a session token (64 lowercase hex digits, as ``newToken()`` makes them):
    /// anything else is refused without asking PostgreSQL.
    package static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// The live session of a cookie's token: `nil` when malformed (without a query), unknown, expired, or its key
    /// was revoked since.
    package func session(token: String) async throws -> Session? {
        guard Self.isWellFormed(token) else { return nil }
        let hash = ByteBuffer(bytes: APIKeys.hash(token))
        let idle = Int(self.idleTimeout.components.seconds)
        let rows = try await self.client.guardedQuery(
            """
            SELECT k.id, k.app_id, a.bundle_id, k.role, s.csrf_token, s.expires_at, s.last_used_at < now() - make_interval(secs => \(Self.touchInterval))
            FROM console_sessions s JOIN api_keys k ON k.id = s.key_id JOIN apps a ON a.id = k.app_id
            WHERE s.token_hash = \(hash) AND s.expires_at > now() AND s.last_used_at > now() - make_interval(secs => \(idle))
              AND k.revoked_at IS NULL
            """,
            logger: self.logger
        )
        for try await (keyID, appID, bundleID, role, csrfToken, expiresAt, isDue) in rows.decode(
            (Int64, Int64, String, String, String, Date, Bool).self
        ) {
            guard let role = APIKeys.Role(rawValue: role) else { return nil }
            if isDue {
                try await self.client.guardedQuery("UPDATE console_sessions SET last_used_at = now() WHERE token_hash = \(hash)", logger: self.logger)
            }
            return Session(
                tokenHash: Array(hash.readableBytesView),
                caller: APIKeys.Caller(keyID: keyID, appID: appID, bundleID: bundleID, role: role),
                csrfToken: csrfToken,
                expiresAt: expiresAt
            )
        }
        return nil
    }

    /// Drops the sessions that ended: past their expiry, or unused for a whole ``lifetime`` (longer than any idle
    /// timeout). The reaper calls it. - Returns: how many were dropped.
    package func pruneEnded() async throws -> Int {
        let lifetime = Int(Self.lifetime.components.seconds)
        let rows = try await self.client.guardedQuery(
            """
            DELETE FROM console_sessions WHERE expires_at <= now() OR last_used_at <= now() - make_interval(secs => \(lifetime))
            RETURNING key_id
            """,
            logger: self.logger
        )
        return rows.count
    }

    /// Ends a session (sign-out), and drops every expired one.
    package func close(token: String) async throws {
        try await self.client.guardedQuery(
            "DELETE FROM console_sessions WHERE token_hash = \(ByteBuffer(bytes: APIKeys.hash(token))) OR expires_at <= now()",
            logger: self.logger
        )
    }

    /// Compares a form's token with the session's in constant time.
    package static func isValid(csrfToken presented: String?, for session: Session) -> Bool {
        guard let presented else { return false }
        return Self.tokensMatch(presented, session.csrfToken)
    }

    /// A new random token: 32 bytes as hex.
    package static func newToken() -> String {
        APIKeys.hex(APIKeys.randomBytes(32))
    }

    /// Whether two tokens are equal, compared in constant time.
    package static func tokensMatch(_ lhs: String, _ rhs: String) -> Bool {
        APIKeys.constantTimeEqual(Array(lhs.utf8), Array(rhs.utf8))
    }
}
