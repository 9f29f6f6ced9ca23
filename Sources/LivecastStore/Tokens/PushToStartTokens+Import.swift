import LivecastCore
import PostgresNIO

extension PushToStartTokens {
    /// Registers many devices' tokens with the outcome of calling ``register(_:)`` for each, in their order: a later
    /// row for the same device and type finds the earlier one's token. Each row is written entirely or not at all,
    /// and a refused row does not stop the others. Plain rows are written a chunk at a time by set-based
    /// statements (``RegistrationImport``).
    /// - Returns: What each registration did, or the ``StoreError`` that ``register(_:)`` would have thrown, in the
    ///   rows' order.
    package func importRegistrations(_ registrations: [Registration]) async throws -> [ImportOutcome<Result>] {
        let rows = registrations.map { ImportRow(registration: $0, token: DeviceToken.normalized($0.token)) }
        let pairCounts = Dictionary(rows.map { ($0.pair, 1) }, uniquingKeysWith: +)
        let tokenCounts = Dictionary(rows.compactMap(\.appToken).map { ($0, 1) }, uniquingKeysWith: +)
        return try await RegistrationImport.run(
            count: rows.count,
            isPlain: { index in
                rows[index].appToken.map { tokenCounts[$0] == 1 } == true && pairCounts[rows[index].pair] == 1
            },
            writePlain: { indices in
                try await self.writePlain(indices.map { ($0, rows[$0]) }, importedTokens: Set(tokenCounts.keys))
            },
            registerOne: { index in try await self.register(registrations[index]) }
        )
    }

    /// A row with its token normalized (`nil` when it is not hex).
    private struct ImportRow {
        let registration: Registration
        let token: String?

        var pair: Pair {
            Pair(appID: self.registration.appID, deviceID: self.registration.deviceID, attributesType: self.registration.attributesType)
        }
        var appToken: AppToken? { self.token.map { AppToken(appID: self.registration.appID, token: $0) } }
    }

    private struct Pair: Hashable {
        let appID: Int64
        let deviceID: String
        let attributesType: String
    }

    private struct AppToken: Hashable {
        let appID: Int64
        let token: String
    }

    /// Writes the rows whose outcome is plain in one transaction, with the live rows of their devices and the rows
    /// holding their tokens locked: a new device and type (`created`), the live token again (`unchanged`), or a new
    /// token replacing one no other row of the import names (`rotated`). Any other row is left to ``register(_:)``.
    ///
    /// The table is analyzed first once it has outgrown its statistics (`analyze_if_outgrown`, `sql/0026`): without
    /// them, on a new database, the look-ups went through the wrong index and read the app's every token for each
    /// row.
    private func writePlain(_ rows: [(index: Int, row: ImportRow)], importedTokens: Set<AppToken>) async throws -> [Int: Result] {
        try await self.client.guardedQuery("SELECT analyze_if_outgrown('push_to_start_tokens')", logger: self.logger)
        return try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let (live, holders) = try await self.lockRows(of: rows.map(\.row), on: connection)
            var results: [Int: Result] = [:]
            var refreshed = PlainRows()
            var inserted = PlainRows()
            var rotatedAway: [Int64] = []
            for (index, row) in rows {
                guard let token = row.token else { continue }
                switch (live[row.pair], holders[AppToken(appID: row.registration.appID, token: token)] ?? []) {
                case (nil, []):
                    inserted.append(row.registration, token: token)
                    results[index] = .created
                case (let current?, []) where !importedTokens.contains(AppToken(appID: row.registration.appID, token: current.token)):
                    rotatedAway.append(current.id)
                    inserted.append(row.registration, token: token)
                    results[index] = .rotated
                case (let current?, let tokenRows) where tokenRows == [current.id]:
                    refreshed.append(row.registration, token: token, id: current.id)
                    results[index] = .unchanged
                default:
                    continue
                }
            }
            if !rotatedAway.isEmpty {
                try await connection.query(
                    "UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE id = ANY(\(rotatedAway))",
                    logger: self.logger
                )
            }
            if !inserted.ids.isEmpty {
                let columns = inserted.columns
                try await connection.query(
                    """
                    INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, user_id, os_version, frequent_updates_enabled)
                    SELECT r.app_id, r.device_id, r.attributes_type, r.token, CASE WHEN r.user_set THEN r.user_id END,
                           CASE WHEN r.os_set THEN r.os_version END, r.frequent
                    FROM unnest(\(columns.appIDs)::bigint[], \(columns.deviceIDs)::text[], \(columns.attributesTypes)::text[],
                                \(columns.tokens)::text[], \(columns.userIDs.values)::text[], \(columns.userIDs.isSet)::bool[],
                                \(columns.osVersions.values)::text[], \(columns.osVersions.isSet)::bool[], \(columns.frequentUpdatesEnabled)::bool[])
                         AS r(app_id, device_id, attributes_type, token, user_id, user_set, os_version, os_set, frequent)
                    """,
                    logger: self.logger
                )
            }
            if !refreshed.ids.isEmpty {
                let columns = refreshed.columns
                try await connection.query(
                    """
                    UPDATE push_to_start_tokens AS p SET user_id = CASE WHEN r.user_set THEN r.user_id END,
                        os_version = CASE WHEN r.os_set THEN r.os_version END, frequent_updates_enabled = r.frequent, last_seen_at = now()
                    FROM unnest(\(refreshed.ids)::bigint[], \(columns.userIDs.values)::text[], \(columns.userIDs.isSet)::bool[],
                                \(columns.osVersions.values)::text[], \(columns.osVersions.isSet)::bool[], \(columns.frequentUpdatesEnabled)::bool[])
                         AS r(id, user_id, user_set, os_version, os_set, frequent)
                    WHERE p.id = r.id
                    """,
                    logger: self.logger
                )
            }
            return results
        }
    }

    /// Locks, in id order, the live rows of the rows' devices and types and the rows holding their tokens (one a type).
    /// Each key is looked up through its unique index (``RegistrationImport``'s probes): a sub-select per key, which
    /// the planner never turns into a join that reads the table.
    private func lockRows(
        of rows: [ImportRow],
        on connection: PostgresConnection
    ) async throws -> (live: [Pair: (id: Int64, token: String)], holders: [AppToken: [Int64]]) {
        let appIDs = rows.map(\.registration.appID)
        let liveRows = try await connection.query(
            """
            SELECT id, app_id, device_id, attributes_type, token FROM push_to_start_tokens
            WHERE invalidated_at IS NULL AND id = ANY(ARRAY(
                SELECT (SELECT l.id FROM push_to_start_tokens l WHERE l.invalidated_at IS NULL
                        AND (l.app_id, l.device_id, l.attributes_type) = (r.app_id, r.device_id, r.attributes_type))
                FROM unnest(\(appIDs)::bigint[], \(rows.map(\.registration.deviceID))::text[], \(rows.map(\.registration.attributesType))::text[])
                     AS r(app_id, device_id, attributes_type)))
            ORDER BY id FOR UPDATE
            """,
            logger: self.logger
        )
        var live: [Pair: (id: Int64, token: String)] = [:]
        for try await (id, appID, deviceID, attributesType, token) in liveRows.decode((Int64, Int64, String, String, String).self) {
            live[Pair(appID: appID, deviceID: deviceID, attributesType: attributesType)] = (id, token)
        }
        let holderRows = try await connection.query(
            """
            SELECT id, app_id, token FROM push_to_start_tokens
            WHERE id = ANY(ARRAY(
                SELECT unnest(ARRAY(SELECT h.id FROM push_to_start_tokens h WHERE (h.app_id, h.token) = (r.app_id, r.token)))
                FROM unnest(\(appIDs)::bigint[], \(rows.map { $0.token ?? "" })::text[]) AS r(app_id, token)))
            ORDER BY id FOR UPDATE
            """,
            logger: self.logger
        )
        var holders: [AppToken: [Int64]] = [:]
        for try await (id, appID, token) in holderRows.decode((Int64, Int64, String).self) {
            holders[AppToken(appID: appID, token: token), default: []].append(id)
        }
        return (live, holders)
    }

    /// Plain rows for `unnest(…)`: each one's id (0 for a new row) and columns.
    private struct PlainRows {
        var ids: [Int64] = []
        var columns = RegistrationColumns()

        mutating func append(_ registration: Registration, token: String, id: Int64 = 0) {
            self.ids.append(id)
            self.columns.append(registration, token: token)
        }
    }
}
