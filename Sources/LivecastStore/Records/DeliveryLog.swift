package import LivecastCore
import Logging
import PostgresNIO

/// The delivery log of an app: every push Livecast sent while its update is kept (the retention window), found
/// by its `apns-id`, its token or its update, successes included, though only failures and broadcasts are stored
/// per push (``PushDerivation``).
package struct DeliveryLog: DatabaseBacked {
    /// What to look for. With ``apnsID``, the one push; with ``token``, the pushes to that device token (or
    /// channel id); with ``updateID`` alone, the pushes of that update; with neither, the stored deliveries (failed
    /// device pushes and every broadcast). ``status`` and ``reason`` narrow any of these.
    package struct Query: Sendable, Hashable {
        package var apnsID: PushID?
        package var token: String?
        package var updateID: Int64?
        /// APNs' HTTP status.
        package var status: Int?
        /// APNs' reason.
        package var reason: String?
        /// Where the previous page ended (its ``Page/next``).
        package var after: Int64?
        /// At most this many records (the filters above may leave a page shorter).
        package var limit = 100

        /// Every stored delivery, the first page: set the filters wanted.
        package init() {}
    }

    /// One page of records.
    package struct Page: Sendable, Hashable, Encodable {
        package var records: [PushRecord]
        /// Pass as ``Query/after`` for the next page; `nil` on the last.
        package var next: Int64?

        /// The API's names (`GET /v1/apps/{bundleId}/deliveries`).
        private enum CodingKeys: String, CodingKey {
            case records = "deliveries"
            case next
        }

        package init(records: [PushRecord], next: Int64? = nil) {
            self.records = records
            self.next = next
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// The records an app's query finds.
    package func find(_ query: Query, appID: Int64) async throws -> Page {
        try await self.client.withGuardedConnection { connection in
            let derivation = PushDerivation(appID: appID, logger: self.logger)
            var page: Page
            if let apnsID = query.apnsID, apnsID.targetKind == .renewal {
                page = Page(records: try await self.renewal(apnsID, appID: appID, on: connection).map { [$0] } ?? [])
            } else if let apnsID = query.apnsID {
                let candidate = try await self.candidate(apnsID, appID: appID, on: connection)
                page = Page(records: try await self.named(derivation.records(of: candidate.map { [$0] } ?? [], on: connection), on: connection))
            } else if let token = query.token {
                page = try await self.pushes(toToken: token, query: query, appID: appID, on: connection)
            } else if let updateID = query.updateID {
                page = try await self.pushes(of: updateID, query: query, appID: appID, on: connection)
            } else {
                page = try await self.stored(query, appID: appID, on: connection)
            }
            page.records = page.records.filter {
                (query.status == nil || $0.status == query.status) && (query.reason == nil || $0.reason == query.reason)
                    && (query.updateID == nil || $0.updateID == query.updateID)
            }
            return page
        }
    }

    // MARK: - By apns-id

    /// The push an id names, when its update and target are the app's and the target was one of the update's.
    private func candidate(_ id: PushID, appID: Int64, on connection: PostgresConnection) async throws -> PushDerivation.Candidate? {
        let rows: PostgresRowSequence
        switch id.targetKind {
        case .activity:
            rows = try await connection.query(
                """
                SELECT a.activity_key, NULL::text FROM activities a
                JOIN updates u ON u.id = \(id.updateID) AND u.app_id = a.app_id AND (u.activity_id = a.id OR u.feed_id = a.feed_id)
                WHERE a.id = \(id.targetID) AND a.app_id = \(appID)
                """,
                logger: self.logger
            )
        case .pushToStart:
            rows = try await connection.query(
                """
                SELECT p.token, p.device_id FROM push_to_start_tokens p
                JOIN updates u ON u.id = \(id.updateID) AND u.app_id = p.app_id
                JOIN feed_starts s ON s.feed_id = u.feed_id AND s.device_id = p.device_id AND s.update_id = u.id
                WHERE p.id = \(id.targetID) AND p.app_id = \(appID)
                """,
                logger: self.logger
            )
        case .renewal:
            return nil  // a renewal's record is its queued start's (``renewal(_:appID:on:)``)
        case .channel:
            rows = try await connection.query(
                """
                SELECT c.channel_id, NULL::text FROM channels c
                JOIN updates u ON u.id = \(id.updateID) AND u.app_id = c.app_id
                WHERE c.id = \(id.targetID) AND c.app_id = \(appID)
                  AND (u.feed_id = c.feed_id OR EXISTS (SELECT 1 FROM activities a WHERE a.id = u.activity_id AND a.channel_id = c.id))
                """,
                logger: self.logger
            )
        }
        for try await (name, deviceID) in rows.decode((String, String?).self) {
            // An activity's push is named by its token afterwards (``named(_:on:)``), not by the activity's id.
            var candidate = PushDerivation.Candidate(
                updateID: id.updateID,
                targetKind: id.targetKind,
                targetID: id.targetID,
                target: id.targetKind == .activity ? "" : name
            )
            switch id.targetKind {
            case .activity: candidate.activityID = name
            case .pushToStart: candidate.deviceID = deviceID
            case .channel, .renewal: break
            }
            return candidate
        }
        return nil
    }

    /// Names the activity pushes' tokens (``ActivityRecord/naming(_:in:)``), with one query for all their activities.
    private func named(_ records: [PushRecord], on connection: PostgresConnection) async throws -> [PushRecord] {
        let activityRowIDs = Set(records.filter { $0.targetKind == .activity }.compactMap { PushID($0.apnsID)?.targetID })
        let tokens = try await ActivityRecord.tokens(of: Array(activityRowIDs), on: connection, logger: self.logger)
        return records.map { record in
            guard record.targetKind == .activity, let activityRowID = PushID(record.apnsID)?.targetID else { return record }
            return ActivityRecord.naming(tokens[activityRowID] ?? [], in: [record])[0]
        }
    }

    // MARK: - By token

    /// The pushes to a device token (an activity's update token, or a push-to-start token), or to a channel,
    /// paged by update id.
    private func pushes(toToken token: String, query: Query, appID: Int64, on connection: PostgresConnection) async throws -> Page {
        let owners = try await connection.query(
            """
            SELECT 'activity', a.activity_key FROM activity_tokens t JOIN activities a ON a.id = t.activity_id
            WHERE t.app_id = \(appID) AND t.token = \(token.lowercased())
            UNION ALL
            SELECT 'push_to_start', p.id::text FROM push_to_start_tokens p WHERE p.app_id = \(appID) AND p.token = \(token.lowercased())
            UNION ALL
            SELECT 'channel', c.channel_id FROM channels c WHERE c.app_id = \(appID) AND c.channel_id = \(token)
            """,
            logger: self.logger
        )
        var candidates: [PushDerivation.Candidate] = []
        var channel: String?
        for try await (kind, owner) in owners.decode((String, String).self) {
            switch kind {
            case "activity":
                guard let row = try await ActivityRecord.activity(appID: appID, activityID: owner, on: connection, logger: self.logger) else {
                    continue
                }
                let tokens = try await ActivityRecord.tokens(of: row.rowID, on: connection, logger: self.logger)
                candidates += try await ActivityRecord.pushes(to: row, tokens: tokens, on: connection, logger: self.logger)
                    .filter { $0.targetKind == .activity }
            case "push_to_start":
                candidates += try await self.starts(toTokenRow: Int64(owner) ?? 0, token: token.lowercased(), on: connection)
            default:
                channel = owner
            }
        }
        if let channel {
            var channelQuery = query
            channelQuery.token = channel
            return try await self.stored(channelQuery, appID: appID, on: connection)
        }
        let after = query.after ?? 0
        let chosen = candidates.filter { $0.updateID > after }.sorted { $0.updateID < $1.updateID }
        let page = Array(chosen.prefix(query.limit))
        var records = try await PushDerivation(appID: appID, logger: self.logger).records(of: page, on: connection)
        records = try await self.named(records, on: connection).filter { $0.target == token.lowercased() }
        return Page(records: records, next: chosen.count > page.count ? page.last?.updateID : nil)
    }

    /// The starts sent to a push-to-start token: the feed starts of its device after its registration.
    private func starts(toTokenRow tokenRowID: Int64, token: String, on connection: PostgresConnection) async throws -> [PushDerivation.Candidate] {
        let rows = try await connection.query(
            """
            SELECT s.update_id, s.device_id FROM push_to_start_tokens p
            JOIN feed_starts s ON s.device_id = p.device_id AND s.started_at >= p.registered_at
                AND (p.invalidated_at IS NULL OR s.started_at <= p.invalidated_at)
            JOIN feeds f ON f.id = s.feed_id AND f.app_id = p.app_id AND f.attributes_type = p.attributes_type
            WHERE p.id = \(tokenRowID)
            """,
            logger: self.logger
        )
        var candidates: [PushDerivation.Candidate] = []
        for try await (updateID, deviceID) in rows.decode((Int64, String).self) {
            candidates.append(.init(updateID: updateID, targetKind: .pushToStart, targetID: tokenRowID, target: token, deviceID: deviceID))
        }
        return candidates
    }

    // MARK: - By update

    /// The pushes of one update, paged by target: a standalone activity's one push; a feed update's broadcast
    /// (on the first page) and its token followers in the fan-out's order; a start's devices.
    private func pushes(of updateID: Int64, query: Query, appID: Int64, on connection: PostgresConnection) async throws -> Page {
        let rows = try await connection.query(
            """
            SELECT u.event, u.activity_id, a.activity_key, u.feed_id, a.channel_id, c.channel_id FROM updates u
            LEFT JOIN activities a ON a.id = u.activity_id
            LEFT JOIN channels c ON c.id = a.channel_id
            WHERE u.id = \(updateID) AND u.app_id = \(appID)
            """,
            logger: self.logger
        )
        var update: (event: LiveActivityEvent, activityRowID: Int64?, activityKey: String?, feedID: Int64?, channelRowID: Int64?, channelID: String?)?
        for try await row in rows.decode((LiveActivityEvent, Int64?, String?, Int64?, Int64?, String?).self) { update = row }
        guard let update else { return Page(records: []) }
        let derivation = PushDerivation(appID: appID, logger: self.logger)
        if let activityRowID = update.activityRowID {
            guard query.after == nil else { return Page(records: []) }
            let candidate: PushDerivation.Candidate
            if let channelRowID = update.channelRowID {
                candidate = .init(updateID: updateID, targetKind: .channel, targetID: channelRowID, target: update.channelID ?? "")
            } else {
                candidate = .init(updateID: updateID, targetKind: .activity, targetID: activityRowID, target: "", activityID: update.activityKey)
            }
            return Page(records: try await self.named(derivation.records(of: [candidate], on: connection), on: connection))
        }
        guard let feedID = update.feedID else { return Page(records: []) }
        var candidates: [PushDerivation.Candidate] = []
        if query.after == nil, update.event != .start {
            candidates += try await self.broadcast(of: updateID, feedID: feedID, on: connection)
        }
        let targets =
            update.event == .start
            ? try await connection.query(
                """
                SELECT p.id, p.token, s.device_id FROM feed_starts s
                JOIN feeds f ON f.id = s.feed_id
                JOIN LATERAL (
                    SELECT p.id, p.token FROM push_to_start_tokens p
                    WHERE p.app_id = f.app_id AND p.device_id = s.device_id AND p.attributes_type = f.attributes_type
                      AND p.registered_at <= s.started_at
                    ORDER BY p.id DESC LIMIT 1
                ) p ON true
                WHERE s.update_id = \(updateID) AND p.id > \(query.after ?? 0)
                ORDER BY p.id LIMIT \(query.limit + 1)
                """,
                logger: self.logger
            )
            : try await connection.query(
                """
                SELECT a.id, '', a.activity_key FROM activities a, updates u
                WHERE u.id = \(updateID) AND a.feed_id = \(feedID) AND a.channel_id IS NULL AND a.id > \(query.after ?? 0)
                  AND a.started_at <= coalesce(u.completed_at, now()) AND coalesce(a.ended_at, now()) >= u.created_at
                ORDER BY a.id LIMIT \(query.limit + 1)
                """,
                logger: self.logger
            )
        var followers: [PushDerivation.Candidate] = []
        for try await (targetID, token, name) in targets.decode((Int64, String, String).self) {
            followers.append(
                update.event == .start
                    ? .init(updateID: updateID, targetKind: .pushToStart, targetID: targetID, target: token, deviceID: name)
                    : .init(updateID: updateID, targetKind: .activity, targetID: targetID, target: "", activityID: name)
            )
        }
        let next = followers.count > query.limit ? followers[query.limit - 1].targetID : nil
        candidates += followers.prefix(query.limit)
        return Page(records: try await self.named(derivation.records(of: candidates, on: connection), on: connection), next: next)
    }

    /// A feed update's broadcast, when its feed had a channel: the recorded one, else the feed's live channel.
    private func broadcast(of updateID: Int64, feedID: Int64, on connection: PostgresConnection) async throws -> [PushDerivation.Candidate] {
        let rows = try await connection.query(
            """
            SELECT c.id, c.channel_id FROM channels c
            WHERE c.feed_id = \(feedID)
              AND (c.state = \(unescaped: ChannelState.active.sql) OR EXISTS (SELECT 1 FROM deliveries d WHERE d.update_id = \(updateID) AND d.target = c.channel_id))
            ORDER BY c.id DESC LIMIT 1
            """,
            logger: self.logger
        )
        var candidates: [PushDerivation.Candidate] = []
        for try await (rowID, channelID) in rows.decode((Int64, String).self) {
            candidates.append(.init(updateID: updateID, targetKind: .channel, targetID: rowID, target: channelID))
        }
        return candidates
    }

    // MARK: - Stored deliveries

    /// The stored deliveries (failed device pushes, every broadcast), newest last, paged by their row.
    private func stored(_ query: Query, appID: Int64, on connection: PostgresConnection) async throws -> Page {
        let rows = try await connection.query(
            """
            SELECT d.id, d.update_id, d.target_kind, d.target, d.status, d.reason, d.apns_id,
                extract(epoch FROM d.attempted_at)::bigint, u.event, u.timestamp, u.stale_date
            FROM deliveries d JOIN updates u ON u.id = d.update_id AND u.app_id = \(appID)
            WHERE d.id > \(query.after ?? 0)
              AND (\(query.token)::text IS NULL OR d.target = \(query.token))
              AND (\(query.updateID)::bigint IS NULL OR d.update_id = \(query.updateID))
              AND (\(query.status)::int IS NULL OR d.status = \(query.status))
              AND (\(query.reason)::text IS NULL OR d.reason = \(query.reason))
            ORDER BY d.id LIMIT \(query.limit + 1)
            """,
            logger: self.logger
        )
        var records: [PushRecord] = []
        var rowIDs: [Int64] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let status = try cells[4].decode(Int?.self)
            let apnsID = try cells[6].decode(String?.self) ?? ""
            let isChannel = try cells[2].decode(String.self) == "channel"
            rowIDs.append(try cells[0].decode(Int64.self))
            records.append(
                PushRecord(
                    apnsID: apnsID,
                    updateID: try cells[1].decode(Int64.self),
                    event: try cells[8].decode(LiveActivityEvent.self),
                    timestamp: try cells[9].decode(Int64.self),
                    staleDate: try cells[10].decode(Int64?.self),
                    targetKind: isChannel ? .channel : PushID(apnsID)?.targetKind ?? .activity,
                    target: try cells[3].decode(String.self),
                    outcome: status == 200 ? .delivered : .failed,
                    status: status,
                    reason: try cells[5].decode(String?.self),
                    at: try cells[7].decode(Int64.self)
                )
            )
        }
        let next = records.count > query.limit ? rowIDs[query.limit - 1] : nil
        return Page(records: Array(records.prefix(query.limit)), next: next)
    }
}
