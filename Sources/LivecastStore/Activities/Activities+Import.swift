import LivecastCore
import PostgresNIO

extension Activities {
    /// Registers many activities with the outcome of calling ``register(_:)`` for each, in their order: a later row
    /// for the same activity finds the earlier one's registration. Each row is written entirely or not at all, and a
    /// refused row does not stop the others. New activities and rows that change nothing but device details are
    /// written a chunk at a time by set-based statements (``RegistrationImport``); a row that adds or rotates an
    /// activity's update token goes through ``register(_:)``, under the activity's and its feed's send locks.
    /// - Returns: What each registration did, or the ``StoreError`` that ``register(_:)`` would have thrown, in the
    ///   rows' order.
    package func importRegistrations(_ registrations: [Registration]) async throws -> [ImportOutcome<Result>] {
        let rows = registrations.map { ImportRow(registration: $0, token: $0.pushToken.flatMap(DeviceToken.normalized)) }
        let keyCounts = Dictionary(rows.map { ($0.key, 1) }, uniquingKeysWith: +)
        let tokenCounts = Dictionary(rows.compactMap(\.appToken).map { ($0, 1) }, uniquingKeysWith: +)
        return try await RegistrationImport.run(
            count: rows.count,
            isPlain: { index in
                let row = rows[index]
                guard keyCounts[row.key] == 1, (row.token == nil) == (row.registration.pushToken == nil) else { return false }
                return row.appToken.map { tokenCounts[$0] == 1 && row.registration.channelID == nil } ?? true
            },
            writePlain: { indices in try await self.writePlain(indices.map { ($0, rows[$0]) }) },
            registerOne: { index in try await self.register(registrations[index]) }
        )
    }

    /// A row with its token normalized (`nil` when there is none or it is not hex).
    private struct ImportRow {
        let registration: Registration
        let token: String?

        var key: AppKey { AppKey(appID: self.registration.appID, key: self.registration.activityKey) }
        var appToken: AppKey? { self.token.map { AppKey(appID: self.registration.appID, key: $0) } }
        var feed: AppKey? { self.registration.feedKey.map { AppKey(appID: self.registration.appID, key: $0) } }
        var channel: AppKey? { self.registration.channelID.map { AppKey(appID: self.registration.appID, key: $0) } }
    }

    /// An app's activity key, token, feed key or channel id.
    private struct AppKey: Hashable {
        let appID: Int64
        let key: String
    }

    /// What the plain rows are judged against, the activities and tokens locked.
    private struct Known {
        var feeds: [AppKey: (id: Int64, attributesType: String, state: FeedState)] = [:]
        var channels: [AppKey: (id: Int64, state: ChannelState)] = [:]
        var activities: [AppKey: (id: Int64, state: ActivityState, attributesType: String)] = [:]
        var tokenHolders: [AppKey: (activityID: Int64, isLive: Bool)] = [:]
    }

    /// Writes the rows whose outcome is plain in one transaction: a new activity whose feed, channel and token fit
    /// (`created`), or a running one of the same attributes type given no token or its live one (`unchanged`, its
    /// device details refreshed). Any other row is left to ``register(_:)``.
    ///
    /// The tables are analyzed first once they have outgrown their statistics (`analyze_if_outgrown`, `sql/0026`):
    /// a feed's first fan-out after 20,000 followers were imported into a new database read each page of 2,000 in
    /// 1–7 s on plans made for empty tables, 43.6 s in all against 2.8 s once analyzed (docs/PERFORMANCE.md).
    private func writePlain(_ rows: [(index: Int, row: ImportRow)]) async throws -> [Int: Result] {
        try await self.client.guardedQuery(
            "SELECT analyze_if_outgrown('activities'), analyze_if_outgrown('activity_tokens')",
            logger: self.logger
        )
        return try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let known = try await self.known(for: rows.map(\.row), on: connection)
            var results: [Int: Result] = [:]
            var created = PlainRows()
            var refreshed = PlainRows()
            for (index, row) in rows {
                let registration = row.registration
                var feedID: Int64 = 0
                if let feed = row.feed {
                    guard let found = known.feeds[feed], found.attributesType == registration.attributesType, found.state != .ended
                    else { continue }
                    feedID = found.id
                }
                var channelRowID: Int64 = 0
                if let channel = row.channel {
                    guard let found = known.channels[channel], found.state == .active else { continue }
                    channelRowID = found.id
                }
                let holder = row.appToken.flatMap { known.tokenHolders[$0] }
                if let activity = known.activities[row.key] {
                    guard activity.state.isRunning, activity.attributesType == registration.attributesType,
                        row.token == nil || (holder?.activityID == activity.id && holder?.isLive == true)
                    else { continue }
                    refreshed.append(registration, id: activity.id)
                    results[index] = .unchanged
                } else {
                    guard holder == nil else { continue }
                    created.append(registration, id: 0, feedID: feedID, channelRowID: channelRowID, token: row.token)
                    results[index] = .created
                }
            }
            if !created.keys.isEmpty { try await self.insert(created, on: connection) }
            if !refreshed.ids.isEmpty {
                try await connection.query(
                    """
                    UPDATE activities AS a SET device_id = CASE WHEN r.device_set THEN r.device_id ELSE a.device_id END,
                        user_id = CASE WHEN r.user_set THEN r.user_id ELSE a.user_id END,
                        os_version = CASE WHEN r.os_set THEN r.os_version ELSE a.os_version END
                    FROM unnest(\(refreshed.ids)::bigint[], \(refreshed.deviceIDs.values)::text[], \(refreshed.deviceIDs.isSet)::bool[],
                                \(refreshed.userIDs.values)::text[], \(refreshed.userIDs.isSet)::bool[],
                                \(refreshed.osVersions.values)::text[], \(refreshed.osVersions.isSet)::bool[])
                         AS r(id, device_id, device_set, user_id, user_set, os_version, os_set)
                    WHERE a.id = r.id
                    """,
                    logger: self.logger
                )
            }
            return results
        }
    }

    /// Inserts new activities and the first update token of those that have one, in one statement: the tokens find
    /// their activities among the rows inserted, not by a look-up in the whole table. A new activity needs no send
    /// lock: no send can read it before this transaction commits.
    private func insert(_ created: PlainRows, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, channel_id, device_id, user_id, os_version, state)
                SELECT r.app_id, r.activity_key, r.attributes_type, nullif(r.feed_id, 0), nullif(r.channel_id, 0),
                       CASE WHEN r.device_set THEN r.device_id END, CASE WHEN r.user_set THEN r.user_id END,
                       CASE WHEN r.os_set THEN r.os_version END,
                       CASE WHEN r.token_set OR r.channel_id <> 0 THEN \(unescaped: ActivityState.active.sql) ELSE \(unescaped: ActivityState.starting.sql) END
                FROM unnest(\(created.appIDs)::bigint[], \(created.keys)::text[], \(created.attributesTypes)::text[], \(created.feedIDs)::bigint[],
                            \(created.channelRowIDs)::bigint[], \(created.deviceIDs.values)::text[], \(created.deviceIDs.isSet)::bool[],
                            \(created.userIDs.values)::text[], \(created.userIDs.isSet)::bool[],
                            \(created.osVersions.values)::text[], \(created.osVersions.isSet)::bool[], \(created.tokens.isSet)::bool[])
                     AS r(app_id, activity_key, attributes_type, feed_id, channel_id, device_id, device_set, user_id, user_set, os_version, os_set, token_set)
                RETURNING app_id, activity_key, id
            )
            INSERT INTO activity_tokens (app_id, activity_id, token, generation)
            SELECT i.app_id, i.id, r.token, 1
            FROM unnest(\(created.appIDs)::bigint[], \(created.keys)::text[], \(created.tokens.values)::text[], \(created.tokens.isSet)::bool[])
                 AS r(app_id, activity_key, token, token_set)
            JOIN inserted i ON (i.app_id, i.activity_key) = (r.app_id, r.activity_key)
            WHERE r.token_set
            """,
            logger: self.logger
        )
    }

    /// The rows' feeds and channels, and their activities and the holders of their tokens, locked in id order (looked
    /// up through their unique indexes, ``RegistrationImport``'s probes).
    private func known(for rows: [ImportRow], on connection: PostgresConnection) async throws -> Known {
        var known = Known()
        let feeds = rows.compactMap(\.feed)
        let feedRows = try await connection.query(
            """
            SELECT f.app_id, f.feed_key, f.id, f.attributes_type, f.state FROM feeds f
            WHERE (f.app_id, f.feed_key) IN (SELECT * FROM unnest(\(feeds.map(\.appID))::bigint[], \(feeds.map(\.key))::text[]))
            """,
            logger: self.logger
        )
        for try await (appID, key, id, attributesType, state) in feedRows.decode((Int64, String, Int64, String, FeedState).self) {
            known.feeds[AppKey(appID: appID, key: key)] = (id, attributesType, state)
        }
        let channels = rows.compactMap(\.channel)
        let channelRows = try await connection.query(
            """
            SELECT app_id, channel_id, id, state FROM channels
            WHERE (app_id, channel_id) IN (SELECT * FROM unnest(\(channels.map(\.appID))::bigint[], \(channels.map(\.key))::text[]))
            """,
            logger: self.logger
        )
        for try await (appID, key, id, state) in channelRows.decode((Int64, String, Int64, ChannelState).self) {
            known.channels[AppKey(appID: appID, key: key)] = (id, state)
        }
        let activityRows = try await connection.query(
            """
            SELECT app_id, activity_key, id, state, attributes_type FROM activities
            WHERE id = ANY(ARRAY(
                SELECT (SELECT a.id FROM activities a WHERE (a.app_id, a.activity_key) = (r.app_id, r.activity_key))
                FROM unnest(\(rows.map(\.key.appID))::bigint[], \(rows.map(\.key.key))::text[]) AS r(app_id, activity_key)))
            ORDER BY id FOR UPDATE
            """,
            logger: self.logger
        )
        for try await (appID, key, id, state, attributesType) in activityRows.decode((Int64, String, Int64, ActivityState, String).self) {
            known.activities[AppKey(appID: appID, key: key)] = (id, state, attributesType)
        }
        let tokens = rows.compactMap(\.appToken)
        let holderRows = try await connection.query(
            """
            SELECT app_id, token, activity_id, invalidated_at IS NULL FROM activity_tokens
            WHERE id = ANY(ARRAY(
                SELECT (SELECT h.id FROM activity_tokens h WHERE (h.app_id, h.token) = (r.app_id, r.token))
                FROM unnest(\(tokens.map(\.appID))::bigint[], \(tokens.map(\.key))::text[]) AS r(app_id, token)))
            ORDER BY id FOR UPDATE
            """,
            logger: self.logger
        )
        for try await (appID, token, activityID, isLive) in holderRows.decode((Int64, String, Int64, Bool).self) {
            known.tokenHolders[AppKey(appID: appID, key: token)] = (activityID, isLive)
        }
        return known
    }

    /// The columns of plain rows, for `unnest(…)`.
    private struct PlainRows {
        var ids: [Int64] = []
        var appIDs: [Int64] = []
        var keys: [String] = []
        var attributesTypes: [String] = []
        var feedIDs: [Int64] = []
        var channelRowIDs: [Int64] = []
        var deviceIDs = OptionalTexts()
        var userIDs = OptionalTexts()
        var osVersions = OptionalTexts()
        var tokens = OptionalTexts()

        mutating func append(_ registration: Registration, id: Int64, feedID: Int64 = 0, channelRowID: Int64 = 0, token: String? = nil) {
            self.ids.append(id)
            self.appIDs.append(registration.appID)
            self.keys.append(registration.activityKey)
            self.attributesTypes.append(registration.attributesType)
            self.feedIDs.append(feedID)
            self.channelRowIDs.append(channelRowID)
            self.deviceIDs.append(registration.deviceID)
            self.userIDs.append(registration.userID)
            self.osVersions.append(registration.osVersion)
            self.tokens.append(token)
        }
    }
}
