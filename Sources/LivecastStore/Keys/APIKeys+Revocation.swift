import Foundation
import PostgresNIO

extension APIKeys {
    /// A revoked key, and the scheduled sends it made (`scheduled_updates.key_id`) that are still to go.
    package struct Revocation: Sendable, Hashable, Encodable {
        package var key: Key
        /// The key's scheduled sends still waiting for their time after the revocation: they are sent then, as
        /// asked, unless cancelled.
        package var scheduledSends: Int
        /// The key's scheduled sends this revocation cancelled.
        package var cancelledScheduledSends: Int

        /// The API's answer (`DELETE /v1/apps/{bundleId}/keys/{keyId}`): the key as listed, with the two counts.
        package func encode(to encoder: any Encoder) throws {
            try self.key.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.scheduledSends, forKey: .scheduledSends)
            try container.encode(self.cancelledScheduledSends, forKey: .cancelledScheduledSends)
        }

        private enum CodingKeys: String, CodingKey {
            case scheduledSends, cancelledScheduledSends
        }
    }

    /// Revokes one of an app's keys, which stops authenticating at once, and counts the scheduled sends it made that
    /// are still to go; with `cancellingScheduledSends`, cancels them in the same statement. Revoking a revoked key
    /// changes nothing but what it cancels.
    /// - Returns: The key and its scheduled sends, or `nil` when the app has no such key.
    package func revoke(appID: Int64, keyID: Int64, cancellingScheduledSends: Bool = false) async throws -> Revocation? {
        let scheduled = ScheduledStatus.scheduled.sql
        let rows = try await self.client.guardedQuery(
            """
            WITH revoked AS (
                UPDATE api_keys SET revoked_at = now() WHERE app_id = \(appID) AND id = \(keyID) AND revoked_at IS NULL
            ), cancelled AS (
                UPDATE scheduled_updates SET status = \(unescaped: ScheduledStatus.cancelled.sql), done_at = now()
                WHERE \(cancellingScheduledSends) AND app_id = \(appID) AND key_id = \(keyID) AND status = \(unescaped: scheduled)
                RETURNING id
            )
            SELECT k.role, k.prefix, k.created_at, coalesce(k.revoked_at, now()),
                (SELECT count(*) FROM scheduled_updates WHERE app_id = \(appID) AND key_id = \(keyID) AND status = \(unescaped: scheduled))::int,
                (SELECT count(*) FROM cancelled)::int
            FROM api_keys k WHERE k.app_id = \(appID) AND k.id = \(keyID)
            """,
            logger: self.logger
        )
        for try await (role, prefix, createdAt, revokedAt, waiting, cancelled) in rows.decode((String, String, Date, Date, Int, Int).self) {
            guard let role = Role(rawValue: role) else { return nil }
            // The statement's counts see the sends as they were before it: the cancelled ones among them.
            return Revocation(
                key: Key(id: keyID, appID: appID, role: role, prefix: prefix, createdAt: createdAt, revokedAt: revokedAt),
                scheduledSends: waiting - cancelled,
                cancelledScheduledSends: cancelled
            )
        }
        return nil
    }
}
