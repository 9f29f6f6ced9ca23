package import PostgresNIO

extension Outbox {
    /// Keeps what was given up as dead letters, and counts each as a failed target of its update.
    package func keep(_ letters: [DeadLetter], appID: Int64, on connection: PostgresConnection) async throws {
        guard !letters.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts)
            SELECT \(appID), update_id, kind, target_id, reason, attempts
            FROM unnest(\(letters.map(\.updateID))::bigint[], \(letters.map(\.targetKind.rawValue))::text[], \(letters.map(\.targetID))::bigint[],
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
    }
}
