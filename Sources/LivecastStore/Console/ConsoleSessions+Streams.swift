package import Foundation
import PostgresNIO

extension ConsoleSessions {
    /// The most live streams (Server-Sent Events) one session has open at once, across every instance.
    package static let streamsPerSession = 4
    /// How long a stream's place holds unless renewed; a stream renews it as it checks its session.
    static let streamLease = 30

    /// Why a session's live stream ended.
    package enum StreamEnding: String, Sendable, Hashable {
        /// The session signed out (or was pruned).
        case signedOut = "signed_out"
        /// The session reached its 12 hours, or went unused for the idle timeout.
        case expired
        /// The session's key was revoked.
        case revoked
    }

    /// Takes a place for a live stream of `session`, unless the session already has ``streamsPerSession`` open.
    /// Places whose stream stopped renewing them (its instance died) are freed first.
    /// - Returns: The stream's id, to check and close it with; `nil` when the session has its most, or has ended.
    package func openStream(of session: Session) async throws -> UUID? {
        let hash = ByteBuffer(bytes: session.tokenHash)
        let stream = UUID()
        return try await self.client.withGuardedTransaction(logger: self.logger) { connection -> UUID? in
            // The session's row, locked: its streams are counted one opening at a time, each seeing the one before.
            let session = try await connection.query(
                "SELECT 1 FROM console_sessions WHERE token_hash = \(hash) AND expires_at > now() FOR UPDATE",
                logger: self.logger
            )
            guard try await session.collect().count == 1 else { return nil }
            let opened = try await connection.query(
                """
                WITH stopped AS (DELETE FROM console_streams WHERE token_hash = \(hash) AND lease_until < now())
                INSERT INTO console_streams (id, token_hash, lease_until)
                SELECT \(stream), \(hash), now() + make_interval(secs => \(Self.streamLease))
                WHERE (SELECT count(*) FROM console_streams WHERE token_hash = \(hash) AND lease_until >= now()) < \(Self.streamsPerSession)
                RETURNING id
                """,
                logger: self.logger
            )
            return try await opened.collect().isEmpty ? nil : stream
        }
    }

    /// Whether the stream's session is still live (not signed out, expired, unused past the idle timeout, nor its
    /// key revoked), renewing the stream's place while it is. Checking is not a use of the session: a stream left
    /// open does not keep its session from going idle.
    /// - Returns: `nil` while the session is live; otherwise why it ended.
    package func checkStream(_ stream: UUID, of session: Session) async throws -> StreamEnding? {
        let hash = ByteBuffer(bytes: session.tokenHash)
        let idle = Int(self.idleTimeout.components.seconds)
        let rows = try await self.client.guardedQuery(
            """
            WITH live AS (
                SELECT 1 FROM console_sessions s JOIN api_keys k ON k.id = s.key_id
                WHERE s.token_hash = \(hash) AND s.expires_at > now() AND s.last_used_at > now() - make_interval(secs => \(idle))
                  AND k.revoked_at IS NULL
            ), renewed AS (
                UPDATE console_streams SET lease_until = now() + make_interval(secs => \(Self.streamLease))
                WHERE id = \(stream) AND lease_until < now() + make_interval(secs => \(Self.streamLease / 2)) AND EXISTS (SELECT 1 FROM live)
            )
            SELECT EXISTS (SELECT 1 FROM live), s.token_hash IS NOT NULL, k.revoked_at IS NOT NULL
            FROM (SELECT 1) one
            LEFT JOIN console_sessions s ON s.token_hash = \(hash)
            LEFT JOIN api_keys k ON k.id = s.key_id
            """,
            logger: self.logger
        )
        for try await (isLive, exists, isRevoked) in rows.decode((Bool, Bool, Bool).self) {
            if isLive { return nil }
            return !exists ? .signedOut : isRevoked ? .revoked : .expired
        }
        return .signedOut
    }

    /// Gives a stream's place back.
    package func closeStream(_ stream: UUID) async throws {
        try await self.client.guardedQuery("DELETE FROM console_streams WHERE id = \(stream)", logger: self.logger)
    }
}
