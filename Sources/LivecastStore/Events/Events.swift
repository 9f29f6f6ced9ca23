import Logging
import PostgresNIO

/// An app's event feed: the events its lifecycle facts wrote (`sql/0035_events.sql`), in a stable order a cursor
/// can page through while new ones are written.
///
/// Events are ordered by the transaction that wrote them, then by id. A page holds only events of transactions older
/// than every transaction still running (`pg_snapshot_xmin`), so a transaction that commits after a later one's events
/// were read cannot slip in behind a cursor: its events wait until it has committed, then come after the cursor.
package struct Events: DatabaseBacked {
    /// One event: its place in the feed, its type, and the JSON the API shows.
    package struct Entry: Sendable, Hashable {
        package var cursor: EventCursor
        package var type: String
        /// The event as JSON text (`event_json`): `id`, `type`, `app`, `occurredAt`, `subject`, `data`.
        package var json: String
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// The app's events after `cursor`, oldest first.
    /// - Parameters:
    ///   - types: Only events of these types; empty: all.
    ///   - limit: At most this many (read one more to learn whether more follow).
    package func page(appID: Int64, after cursor: EventCursor, types: [EventType], limit: Int) async throws -> [Entry] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT e.transaction_id::text, e.id, e.type, event_json(e)::text FROM events e
            WHERE e.app_id = \(appID)
              AND (e.transaction_id, e.id) > (\(String(cursor.transactionID))::xid8, \(cursor.eventID))
              AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
              AND (cardinality(\(types.map(\.rawValue))::text[]) = 0 OR e.type = ANY(\(types.map(\.rawValue))::text[]))
            ORDER BY e.transaction_id, e.id
            LIMIT \(min(limit, Int(Int32.max)))
            """,
            logger: self.logger
        )
        var entries: [Entry] = []
        for try await (transactionID, id, type, json) in rows.decode((String, Int64, String, String).self) {
            let cursor = EventCursor(transactionID: UInt64(transactionID) ?? 0, eventID: id)
            entries.append(Entry(cursor: cursor, type: type, json: json))
        }
        return entries
    }

    /// How many events every app's facts have written since the database was made: the last event's id (an
    /// identity, never reused; pruning does not lower it). A counter for `livecast_events_written`.
    package func writtenCount() async throws -> Int64 {
        let rows = try await self.client.guardedQuery("SELECT coalesce(max(id), 0) FROM events", logger: self.logger)
        for try await count in rows.decode(Int64.self) { return count }
        return 0
    }
}
