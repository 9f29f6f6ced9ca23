import LivecastCore
import PostgresNIO

extension DeliveryLog {
    /// The record of a renewal push: its queued start (`queued_starts`), which keeps what became of it, since a
    /// renewal belongs to no update's fan-out. `nil` when the id names no renewal of the app's.
    func renewal(_ id: PushID, appID: Int64, on connection: PostgresConnection) async throws -> PushRecord? {
        let rows = try await connection.query(
            """
            SELECT q.state, q.reason, q.attempts, q.timestamp, extract(epoch FROM coalesce(q.sent_at, q.due_at))::bigint,
                a.activity_key, coalesce(q.device_id, ''), coalesce(p.token, ''), f.stale_date
            FROM queued_starts q
            JOIN activities a ON a.id = q.activity_id
            JOIN feeds f ON f.id = q.feed_id
            LEFT JOIN push_to_start_tokens p ON p.id = q.token_id
            WHERE q.activity_id = \(id.targetID) AND q.kind = \(unescaped: QueuedStartKind.renewal.sql) AND q.app_id = \(appID)
            """,
            logger: self.logger
        )
        for try await row in rows.decode((QueuedStartState, String?, Int, Int64?, Int64, String, String, String, Int64?).self) {
            let outcome: PushRecord.Outcome =
                switch row.0 {
                case .sent: .delivered
                case .dropped: .failed
                case .waiting, .sending: row.1 == nil ? .pending : .retrying
                }
            return PushRecord(
                apnsID: id.uuidString,
                updateID: id.updateID,
                event: .start,
                timestamp: row.3 ?? 0,
                staleDate: row.8,
                targetKind: .renewal,
                target: row.7,
                activityID: row.5,
                deviceID: row.6,
                outcome: outcome,
                status: nil,
                reason: row.1,
                attempts: row.2,
                at: row.4
            )
        }
        return nil
    }
}
