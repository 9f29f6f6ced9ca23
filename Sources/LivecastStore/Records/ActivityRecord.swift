import Foundation
import LivecastCore
import Logging
package import PostgresNIO

/// What Livecast knows of one activity, for support's "what happened to this user's activity?": its state, its
/// current token or channel, and a timeline of everything that happened to it, oldest first. It is encoded as the
/// API shows it (`GET /v1/apps/{bundleId}/activities/{activityId}`).
package struct ActivityRecord: Sendable, Hashable, Encodable {
    /// The activity as it stands now: its stored state, or `stale` for an active one past its stale date.
    package enum State: String, Sendable, Hashable, Encodable {
        case starting, active, stale, ended, dismissed

        init(_ stored: ActivityState) {
            switch stored {
            case .starting: self = .starting
            case .active: self = .active
            case .ended: self = .ended
            case .dismissed: self = .dismissed
            }
        }
    }

    /// How its updates reach it.
    package enum Kind: String, Sendable, Hashable, Encodable {
        /// By its own push token.
        case token
        /// By its feed's broadcast channel.
        case channel
    }

    /// One moment of the timeline.
    package struct Event: Sendable, Hashable, Encodable {
        package enum Kind: String, Sendable, Hashable, Encodable {
            /// The app reported the activity.
            case registered
            /// A token was registered for it: its first (`generation` 1) or a rotation.
            case tokenRegistered
            /// A token was invalidated, with the reason (APNs' answer, or `rotated`, `dismissed`…).
            case tokenInvalidated
            /// A push went (or is owed, or was given up) to it: ``push``.
            case push
            /// The content's `stale-date` passed while the activity ran.
            case stale
            case ended
            case dismissed
        }

        package var kind: Kind
        /// When (UNIX seconds).
        package var at: Int64
        package var token: String?
        /// The token's generation, for ``Kind/tokenRegistered``.
        package var generation: Int?
        package var reason: String?
        package var push: PushRecord?

        /// The API's names.
        private enum CodingKeys: String, CodingKey {
            case kind = "type"
            case at, token, generation, reason, push
        }
    }

    /// ActivityKit's id of the activity.
    package var activityID: String
    package var attributesType: String
    /// The feed it follows, if any.
    package var feedKey: String?
    package var kind: Kind
    package var state: State
    /// The live update token, for a token-based activity.
    package var token: String?
    /// The channel, for a channel-based activity.
    package var channelID: String?
    package var deviceID: String?
    package var userID: String?
    package var osVersion: String?
    /// When it was registered (UNIX seconds).
    package var startedAt: Int64
    package var endedAt: Int64?
    package var dismissalDate: Int64?
    /// The activity a renewal replaced by this one, and the one that replaced it (ActivityKit ids).
    package var renewedFrom: String?
    package var renewedTo: String?
    /// Where its renewal stands, for a follower of a renewing feed.
    package var renewal: Renewal?
    /// Oldest first; pushes are the latest ``maximumPushes`` at most.
    package var timeline: [Event]

    /// A follower's renewal: planned, sent, dropped, or impossible (and why).
    package struct Renewal: Sendable, Hashable, Encodable {
        /// `queued`, `sent`, `dropped`, or why it cannot be renewed: `noPushToStartToken` (iOS before 17.2, or no
        /// token registered), `noDevice`.
        package var state: String
        /// Why a renewal waits or was dropped.
        package var reason: String?
        /// When it is due, or was sent (UNIX seconds).
        package var dueAt: Int64?
        package var sentAt: Int64?

        /// The renewal its queued start describes.
        init(queued: QueuedStartState, reason: String?, dueAt: Int64?, sentAt: Int64?) {
            let impossible = [QueuedStartDrop.noPushToStartToken, QueuedStartDrop.noDevice]
            switch queued {
            case .waiting, .sending: self.state = "queued"
            case .sent: self.state = "sent"
            case .dropped: self.state = reason.flatMap { impossible.contains($0) ? $0 : nil } ?? "dropped"
            }
            self.reason = reason
            self.dueAt = dueAt
            self.sentAt = sentAt
        }
    }

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case activityID = "activityId"
        case attributesType
        case feedKey = "feed"
        case kind, state, token
        case channelID = "channelId"
        case deviceID = "deviceId"
        case userID = "userId"
        case osVersion, startedAt, endedAt, dismissalDate, renewedFrom, renewedTo, renewal, timeline
    }

    /// The most pushes a timeline shows (the latest): an 8-hour game updated every second sends 28,800.
    package static let maximumPushes = 1000

    /// Reads an activity of an app by its ActivityKit id.
    /// - Returns: `nil` when the app has no such activity.
    package static func read(appID: Int64, activityID: String, client: PostgresClient, logger: Logger) async throws -> ActivityRecord? {
        try await client.withGuardedConnection { connection in
            guard let row = try await Self.activity(appID: appID, activityID: activityID, on: connection, logger: logger) else { return nil }
            let tokens = try await Self.tokens(of: row.rowID, on: connection, logger: logger)
            let candidates = try await Self.pushes(to: row, tokens: tokens, on: connection, logger: logger)
            let pushes = Self.naming(
                tokens,
                in: try await PushDerivation(appID: appID, logger: logger).records(of: candidates, on: connection)
            )
            let now = Int64(Date().timeIntervalSince1970)
            var record = row.record
            record.token = tokens.last { $0.invalidatedAt == nil }?.token
            record.timeline = Self.timeline(row, tokens: tokens, pushes: pushes, now: now)
            if record.state == .active, Self.isStale(pushes: pushes, activityStaleDate: row.staleDate, now: now) {
                record.state = .stale
            }
            return record
        }
    }

    /// The activity's row with what the record needs that it does not show.
    struct Row {
        var record: ActivityRecord
        var rowID: Int64
        var feedID: Int64?
        var channelRowID: Int64?
        var staleDate: Int64?
        var dismissedAt: Int64?
    }

    struct Token {
        var id: Int64
        var token: String
        var generation: Int
        var registeredAt: Int64
        var invalidatedAt: Int64?
        var reason: String?
    }

    static func activity(appID: Int64, activityID: String, on connection: PostgresConnection, logger: Logger) async throws -> Row? {
        let rows = try await connection.query(
            """
            SELECT a.id, a.attributes_type, a.feed_id, f.feed_key, a.channel_id, c.channel_id, a.device_id, a.user_id,
                a.os_version, a.state, a.stale_date, a.dismissal_date, extract(epoch FROM a.started_at)::bigint,
                extract(epoch FROM a.ended_at)::bigint, extract(epoch FROM a.dismissed_at)::bigint,
                (SELECT p.activity_key FROM activities p WHERE p.id = a.renewed_from),
                (SELECT n.activity_key FROM activities n WHERE n.id = a.renewed_to),
                q.state, q.reason,
                extract(epoch FROM q.due_at)::bigint, extract(epoch FROM q.sent_at)::bigint
            FROM activities a
            LEFT JOIN feeds f ON f.id = a.feed_id
            LEFT JOIN channels c ON c.id = a.channel_id
            LEFT JOIN queued_starts q ON q.activity_id = a.id AND q.kind = \(unescaped: QueuedStartKind.renewal.sql)
            WHERE a.app_id = \(appID) AND a.activity_key = \(activityID)
            """,
            logger: logger
        )
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let channelRowID = try cells[4].decode(Int64?.self)
            let record = ActivityRecord(
                activityID: activityID,
                attributesType: try cells[1].decode(String.self),
                feedKey: try cells[3].decode(String?.self),
                kind: channelRowID == nil ? .token : .channel,
                state: State(try cells[9].decode(ActivityState.self)),
                token: nil,
                channelID: try cells[5].decode(String?.self),
                deviceID: try cells[6].decode(String?.self),
                userID: try cells[7].decode(String?.self),
                osVersion: try cells[8].decode(String?.self),
                startedAt: try cells[12].decode(Int64.self),
                endedAt: try cells[13].decode(Int64?.self),
                dismissalDate: try cells[11].decode(Int64?.self),
                renewedFrom: try cells[15].decode(String?.self),
                renewedTo: try cells[16].decode(String?.self),
                renewal: try cells[17].decode(QueuedStartState?.self).map { state in
                    Renewal(
                        queued: state,
                        reason: try cells[18].decode(String?.self),
                        dueAt: try cells[19].decode(Int64?.self),
                        sentAt: try cells[20].decode(Int64?.self)
                    )
                },
                timeline: []
            )
            return Row(
                record: record,
                rowID: try cells[0].decode(Int64.self),
                feedID: try cells[2].decode(Int64?.self),
                channelRowID: channelRowID,
                staleDate: try cells[10].decode(Int64?.self),
                dismissedAt: try cells[14].decode(Int64?.self)
            )
        }
        return nil
    }

    static func tokens(of activityRowID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> [Token] {
        try await Self.tokens(of: [activityRowID], on: connection, logger: logger)[activityRowID] ?? []
    }

    /// The tokens of several activities in one query, each activity's by generation.
    static func tokens(of activityRowIDs: [Int64], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: [Token]] {
        guard !activityRowIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT activity_id, id, token, generation, extract(epoch FROM registered_at)::bigint,
                extract(epoch FROM invalidated_at)::bigint, invalidation_reason
            FROM activity_tokens WHERE activity_id = ANY(\(activityRowIDs)) ORDER BY activity_id, generation
            """,
            logger: logger
        )
        var tokens: [Int64: [Token]] = [:]
        for try await (activityID, id, token, generation, registeredAt, invalidatedAt, reason) in rows.decode(
            (Int64, Int64, String, Int, Int64, Int64?, String?).self
        ) {
            tokens[activityID, default: []].append(
                Token(id: id, token: token, generation: generation, registeredAt: registeredAt, invalidatedAt: invalidatedAt, reason: reason)
            )
        }
        return tokens
    }

    /// The pushes the activity was (or is to be) sent: the start that created it, on its device's push-to-start
    /// token, when it came from a feed's start; then its own updates, or its feed's updates from its registration
    /// to its end (once on its channel for a channel-based one, by its token otherwise), superseded ones aside.
    static func pushes(to row: Row, tokens: [Token], on connection: PostgresConnection, logger: Logger) async throws -> [PushDerivation.Candidate] {
        var candidates: [PushDerivation.Candidate] = []
        if let feedID = row.feedID, let deviceID = row.record.deviceID {
            let starts = try await connection.query(
                """
                SELECT s.update_id, p.id, p.token FROM feed_starts s
                JOIN LATERAL (
                    SELECT p.id, p.token FROM push_to_start_tokens p
                    JOIN activities a ON a.id = \(row.rowID)
                    WHERE p.app_id = a.app_id AND p.device_id = s.device_id AND p.attributes_type = a.attributes_type
                      AND p.registered_at <= s.started_at
                    ORDER BY p.id DESC LIMIT 1
                ) p ON true
                WHERE s.feed_id = \(feedID) AND s.device_id = \(deviceID)
                """,
                logger: logger
            )
            for try await (updateID, tokenRowID, token) in starts.decode((Int64, Int64, String).self) {
                candidates.append(.init(updateID: updateID, targetKind: .pushToStart, targetID: tokenRowID, target: token, deviceID: deviceID))
            }
        }
        let updates = try await connection.query(
            """
            SELECT id FROM (
                SELECT u.id FROM updates u, activities a
                WHERE a.id = \(row.rowID) AND u.status <> \(unescaped: OutboxStatus.superseded.sql)
                  AND (u.activity_id = a.id
                       OR (u.feed_id = a.feed_id AND u.event <> \(unescaped: LiveActivityEvent.start.sql)
                           AND coalesce(u.completed_at, now()) >= a.started_at AND u.created_at <= coalesce(a.ended_at, now())))
                ORDER BY u.id DESC LIMIT \(Self.maximumPushes)
            ) latest ORDER BY id
            """,
            logger: logger
        )
        let currentToken = tokens.last?.token ?? ""
        for try await updateID in updates.decode(Int64.self) {
            if let channelRowID = row.channelRowID {
                candidates.append(.init(updateID: updateID, targetKind: .channel, targetID: channelRowID, target: row.record.channelID ?? ""))
            } else {
                candidates.append(
                    .init(updateID: updateID, targetKind: .activity, targetID: row.rowID, target: currentToken, activityID: row.record.activityID)
                )
            }
        }
        return candidates
    }

    /// Names the token each push to the activity went to: the one registered last before the push (its latest
    /// when none was).
    static func naming(_ tokens: [Token], in pushes: [PushRecord]) -> [PushRecord] {
        pushes.map { push in
            guard push.targetKind == .activity, let token = tokens.last(where: { $0.registeredAt <= push.at }) ?? tokens.last else { return push }
            var named = push
            named.target = token.token
            return named
        }
    }

    private static func timeline(_ row: Row, tokens: [Token], pushes: [PushRecord], now: Int64) -> [Event] {
        var events = [Event(kind: .registered, at: row.record.startedAt)]
        for token in tokens {
            events.append(Event(kind: .tokenRegistered, at: token.registeredAt, token: token.token, generation: token.generation))
            if let invalidatedAt = token.invalidatedAt {
                events.append(Event(kind: .tokenInvalidated, at: invalidatedAt, token: token.token, reason: token.reason))
            }
        }
        for push in pushes {
            events.append(Event(kind: .push, at: push.at, token: push.targetKind == .channel ? nil : push.target, push: push))
        }
        let lastStale = pushes.last { $0.outcome == .delivered }?.staleDate ?? row.staleDate
        if let lastStale, lastStale <= now, lastStale < (row.record.endedAt ?? .max) {
            events.append(Event(kind: .stale, at: lastStale))
        }
        if let endedAt = row.record.endedAt { events.append(Event(kind: .ended, at: endedAt)) }
        if row.record.state == .dismissed {
            events.append(Event(kind: .dismissed, at: row.dismissedAt ?? row.record.dismissalDate ?? row.record.endedAt ?? now))
        }
        // Stable: at one second, registration comes before its token and a push before the end it carried.
        return events.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
    }

    /// Whether the last delivered push's `stale-date` (else the activity's own) has passed.
    private static func isStale(pushes: [PushRecord], activityStaleDate: Int64?, now: Int64) -> Bool {
        guard let staleDate = pushes.last(where: { $0.outcome == .delivered })?.staleDate ?? activityStaleDate else { return false }
        return staleDate <= now
    }
}
