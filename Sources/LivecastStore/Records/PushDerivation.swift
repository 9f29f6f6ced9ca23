import LivecastCore
import Logging
import PostgresNIO

/// Derives push records from what the outbox keeps: an update's status and fan-out checkpoint, the failures in
/// `deliveries`, the pushes still owed in `owed_pushes` and the ones given up in `dead_letters`. Nothing is
/// written per successful push, so a record is reconstructed here.
struct PushDerivation {
    /// A push to derive: an update to one target.
    struct Candidate: Hashable {
        var updateID: Int64
        var targetKind: PushID.TargetKind
        /// `activities.id`, `push_to_start_tokens.id` or `channels.id`.
        var targetID: Int64
        /// The token or channel id, shown in the record.
        var target: String
        var activityID: String?
        var deviceID: String?
    }

    let appID: Int64
    let logger: Logger

    /// The records of the candidates whose update belongs to the app, in the candidates' order.
    func records(of candidates: [Candidate], on connection: PostgresConnection) async throws -> [PushRecord] {
        guard !candidates.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT c.n, u.event, u.timestamp, u.stale_date, u.status,
                CASE WHEN u.sliced THEN coalesce(
                        (SELECT s.cursor_id FROM fan_out_slices s
                         WHERE s.update_id = u.id AND c.target_id > s.lower_id AND c.target_id <= s.upper_id), u.cursor_id)
                     ELSE u.cursor_id END,
                u.feed_id IS NOT NULL,
                extract(epoch FROM coalesce(u.completed_at, u.created_at))::bigint,
                d.status, d.reason, extract(epoch FROM d.attempted_at)::bigint,
                o.attempts, o.last_status, o.last_reason,
                l.target_kind, l.reason, l.attempts, extract(epoch FROM l.last_try_at)::bigint
            FROM unnest(\(candidates.map(\.updateID))::bigint[], \(candidates.map(\.targetKind.sqlName))::text[],
                        \(candidates.map(\.targetID))::bigint[]) WITH ORDINALITY AS c(update_id, kind, target_id, n)
            JOIN updates u ON u.id = c.update_id AND u.app_id = \(self.appID)
            LEFT JOIN LATERAL (
                SELECT d.status, d.reason, d.attempted_at FROM deliveries d
                WHERE d.update_id = c.update_id
                  AND d.target_kind = CASE c.kind WHEN 'channel' THEN 'channel' ELSE 'device' END
                  AND d.target = ANY(CASE c.kind
                      WHEN 'activity' THEN ARRAY(SELECT t.token FROM activity_tokens t WHERE t.activity_id = c.target_id)
                      WHEN 'push_to_start' THEN ARRAY(SELECT p.token FROM push_to_start_tokens p WHERE p.id = c.target_id)
                      ELSE ARRAY(SELECT ch.channel_id FROM channels ch WHERE ch.id = c.target_id) END)
                ORDER BY d.id DESC LIMIT 1
            ) d ON true
            LEFT JOIN owed_pushes o ON o.update_id = c.update_id AND o.target_kind = c.kind AND o.target_id = c.target_id
            LEFT JOIN LATERAL (
                SELECT l.target_kind, l.reason, l.attempts, l.last_try_at FROM dead_letters l
                WHERE l.update_id = c.update_id
                  AND ((l.target_kind = c.kind AND l.target_id = c.target_id) OR l.target_kind = \(unescaped: DeadLetterTargetKind.feed.sql))
                ORDER BY l.id DESC LIMIT 1
            ) l ON true
            ORDER BY c.n
            """,
            logger: self.logger
        )
        var records: [PushRecord] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let candidate = candidates[Int(try cells[0].decode(Int64.self)) - 1]
            let update = UpdateProgress(
                status: try cells[4].decode(OutboxStatus.self),
                cursor: try cells[5].decode(Int64.self),
                isFanOut: try cells[6].decode(Bool.self),
                at: try cells[7].decode(Int64.self)
            )
            // A stored delivery: a device push's failure, or a broadcast whatever its answer.
            let delivery = try cells[10].decode(Int64?.self).map {
                StoredAnswer(status: try cells[8].decode(Int?.self), reason: try cells[9].decode(String?.self) ?? "", at: $0)
            }
            let owed = try cells[11].decode(Int?.self).map {
                StoredAnswer(status: try cells[12].decode(Int?.self), reason: try cells[13].decode(String.self), attempts: $0)
            }
            var deadLetter: StoredAnswer?
            // A fan-out given up as a whole ("feed") concerns the followers it had not reached.
            if let kind = try cells[14].decode(String?.self),
                kind != "feed" || (candidate.targetKind != .channel && update.cursor < candidate.targetID)
            {
                deadLetter = StoredAnswer(
                    reason: try cells[15].decode(String.self),
                    attempts: try cells[16].decode(Int.self),
                    at: try cells[17].decode(Int64.self)
                )
            }
            var record = PushRecord(
                apnsID: PushID(updateID: candidate.updateID, targetKind: candidate.targetKind, targetID: candidate.targetID)?.uuidString ?? "",
                updateID: candidate.updateID,
                event: try cells[1].decode(LiveActivityEvent.self),
                timestamp: try cells[2].decode(Int64.self),
                staleDate: try cells[3].decode(Int64?.self),
                targetKind: candidate.targetKind,
                target: candidate.target,
                activityID: candidate.activityID,
                deviceID: candidate.deviceID,
                outcome: .pending,
                at: update.at
            )
            Self.settle(&record, candidate: candidate, update: update, delivery: delivery, owed: owed, deadLetter: deadLetter)
            records.append(record)
        }
        return records
    }

    /// What the outbox row says of the update as a whole.
    private struct UpdateProgress {
        var status: OutboxStatus
        /// The last follower (or push-to-start token) a fan-out handled; of a split fan-out, the target's slice's.
        var cursor: Int64
        var isFanOut: Bool
        /// Its completion, or its acceptance while unfinished (UNIX seconds).
        var at: Int64
    }

    /// A stored answer about the target: a failure, an owed retry or a dead letter.
    private struct StoredAnswer {
        var status: Int?
        var reason: String
        var attempts: Int?
        var at: Int64?
    }

    /// Decides the outcome: what was stored about the target wins (given up, answered, owed); otherwise the
    /// update's progress tells whether the push went out.
    private static func settle(
        _ record: inout PushRecord,
        candidate: Candidate,
        update: UpdateProgress,
        delivery: StoredAnswer?,
        owed: StoredAnswer?,
        deadLetter: StoredAnswer?
    ) {
        if let deadLetter {
            record.outcome = .gaveUp
            record.reason = deadLetter.reason
            record.attempts = deadLetter.attempts
            record.status = delivery?.status ?? owed?.status
            record.at = deadLetter.at ?? record.at
        } else if let delivery, delivery.status != 200 {
            record.outcome = .failed
            record.status = delivery.status
            record.reason = delivery.reason
            record.at = delivery.at ?? record.at
        } else if let delivery {
            record.outcome = .delivered
            record.status = 200
            record.at = delivery.at ?? record.at
        } else if let owed {
            record.outcome = .retrying
            record.status = owed.status
            record.reason = owed.reason
            record.attempts = owed.attempts
        } else {
            // A fan-out's followers past its checkpoint are done; a channel's broadcast is always recorded above.
            let walked = update.isFanOut && candidate.targetKind != .channel && candidate.targetID <= update.cursor
            switch update.status {
            case .sent: record.outcome = .delivered
            case .superseded: record.outcome = .superseded
            case .failed: record.outcome = walked ? .delivered : .failed
            case .pending, .dispatching: record.outcome = walked ? .delivered : .pending
            }
            if record.outcome == .delivered { record.status = 200 }
        }
    }
}
