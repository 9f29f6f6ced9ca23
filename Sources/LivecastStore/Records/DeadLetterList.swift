package import LivecastCore
import Logging
package import PostgresNIO

/// What the outbox finally gave up on (`dead_letters`), as an operator lists it. It is encoded as the API shows it
/// (`GET /v1/apps/{bundleId}/dead-letters`).
package struct DeadLetterEntry: Sendable, Hashable, Encodable {
    package var id: Int64
    package var updateID: Int64
    package var event: LiveActivityEvent
    /// One target's push, or `feed` for a fan-out given up as a whole.
    package var targetKind: DeadLetterTargetKind
    /// The activity's id, the device token, the channel id or the feed key, when the target is still known.
    package var target: String?
    package var reason: String
    package var attempts: Int
    /// The last try (UNIX seconds).
    package var lastTryAt: Int64
    package var replayedAt: Int64?
    /// What its replay did, once replayed.
    package var replayOutcome: DeadLetterReplay.Outcome?

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case id
        case updateID = "updateId"
        case event, targetKind, target, reason, attempts, lastTryAt, replayedAt, replayOutcome
    }

    /// As the API shows it: `targetKind` is ``DeadLetterTargetKind/apiName``.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.id, forKey: .id)
        try container.encode(self.updateID, forKey: .updateID)
        try container.encode(self.event, forKey: .event)
        try container.encode(self.targetKind.apiName, forKey: .targetKind)
        try container.encodeIfPresent(self.target, forKey: .target)
        try container.encode(self.reason, forKey: .reason)
        try container.encode(self.attempts, forKey: .attempts)
        try container.encode(self.lastTryAt, forKey: .lastTryAt)
        try container.encodeIfPresent(self.replayedAt, forKey: .replayedAt)
        try container.encodeIfPresent(self.replayOutcome, forKey: .replayOutcome)
    }

    /// An app's dead letters, oldest first: at most `limit`, after the id `after` (a page's last) when given.
    package static func list(appID: Int64, after: Int64?, limit: Int, client: PostgresClient, logger: Logger) async throws -> [DeadLetterEntry] {
        let rows = try await client.guardedQuery(
            """
            SELECT l.id, l.update_id, u.event, l.target_kind,
                CASE l.target_kind
                    WHEN 'activity' THEN (SELECT a.activity_key FROM activities a WHERE a.id = l.target_id)
                    WHEN 'push_to_start' THEN (SELECT p.token FROM push_to_start_tokens p WHERE p.id = l.target_id)
                    WHEN 'channel' THEN (SELECT c.channel_id FROM channels c WHERE c.id = l.target_id)
                    ELSE (SELECT f.feed_key FROM feeds f WHERE f.id = u.feed_id) END,
                l.reason, l.attempts, extract(epoch FROM l.last_try_at)::bigint, extract(epoch FROM l.replayed_at)::bigint, l.replay_outcome
            FROM dead_letters l JOIN updates u ON u.id = l.update_id
            WHERE l.app_id = \(appID) AND l.id > \(after ?? 0)
            ORDER BY l.id LIMIT \(limit)
            """,
            logger: logger
        )
        var entries: [DeadLetterEntry] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            entries.append(
                DeadLetterEntry(
                    id: try cells[0].decode(Int64.self),
                    updateID: try cells[1].decode(Int64.self),
                    event: try cells[2].decode(LiveActivityEvent.self),
                    targetKind: try cells[3].decode(DeadLetterTargetKind.self),
                    target: try cells[4].decode(String?.self),
                    reason: try cells[5].decode(String.self),
                    attempts: try cells[6].decode(Int.self),
                    lastTryAt: try cells[7].decode(Int64.self),
                    replayedAt: try cells[8].decode(Int64?.self),
                    replayOutcome: try cells[9].decode(DeadLetterReplay.Outcome?.self)
                )
            )
        }
        return entries
    }
}
