import Metrics
import PostgresNIO

/// What the outbox finally gave up on, for one target: kept in `dead_letters` with the reason and the tries.
struct DeadLetter: Sendable {
    var updateID: Int64
    /// `activity`, `push_to_start`, `channel` (``OwedTarget/Kind``), or `feed` for a whole fan-out.
    var targetKind: String
    var targetID: Int64
    var reason: String
    var attempts: Int
}

extension Dispatcher {
    /// Keeps what was given up as dead letters, counts them in `livecast_dead_letters_total`, and counts each as
    /// a failed target of its update.
    func deadLetter(_ letters: [DeadLetter], appID: Int64, on connection: PostgresConnection) async throws {
        guard !letters.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts)
            SELECT \(appID), update_id, kind, target_id, reason, attempts
            FROM unnest(\(letters.map(\.updateID))::bigint[], \(letters.map(\.targetKind))::text[], \(letters.map(\.targetID))::bigint[],
                        \(letters.map(\.reason))::text[], \(letters.map(\.attempts))::int[]) AS l(update_id, kind, target_id, reason, attempts)
            """,
            logger: self.logger
        )
        try await connection.query(
            """
            UPDATE updates u SET failed_count = u.failed_count + l.count
            FROM (SELECT update_id, count(*) AS count FROM unnest(\(letters.map(\.updateID))::bigint[]) AS l(update_id) GROUP BY 1) AS l
            WHERE u.id = l.update_id
            """,
            logger: self.logger
        )
        self.logger.warning(
            "gave up pushes as dead letters",
            metadata: ["count": "\(letters.count)", "reasons": "\(Set(letters.map(\.reason)).sorted())", "app": "\(appID)"]
        )
        Counter(label: "livecast_dead_letters_total").increment(by: letters.count)
    }
}
