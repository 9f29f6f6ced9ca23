import Foundation
package import LivecastCore
import Logging
import PostgresNIO

/// Feeds: the live stories a backend tells, which activities follow.
package struct Feeds: DatabaseBacked {
    /// What a backend declares about a feed (`PUT …/feeds/{feedKey}`).
    package struct Definition: Sendable, Hashable {
        package var appID: Int64
        package var feedKey: String
        package var attributesType: String
        /// The static `ActivityAttributes`, as JSON kept byte for byte.
        package var attributes: RawJSON
        /// How long after an update the activity turns stale, for `stale-date` defaults (whole seconds are kept).
        package var staleAfter: Duration?
        /// How long after its `stale-date` the reaper ends the feed; the reaper's global grace when `nil`.
        package var staleGrace: Duration?
        /// Whether and how its followers' activities are renewed before the activity lifetime; `nil`: not renewed.
        package var renewal: Renewal?

        package init(
            appID: Int64,
            feedKey: String,
            attributesType: String,
            attributes: RawJSON,
            staleAfter: Duration? = nil,
            staleGrace: Duration? = nil,
            renewal: Renewal? = nil
        ) {
            self.appID = appID
            self.feedKey = feedKey
            self.attributesType = attributesType
            self.attributes = attributes
            self.staleAfter = staleAfter
            self.staleGrace = staleGrace
            self.renewal = renewal
        }
    }

    /// How a feed's followers are carried past the activity lifetime (ActivityKit's 8 hours): each follower's
    /// activity is replaced by a push-to-start ``before`` its lifetime ends, if the feed was updated within
    /// ``ifUpdatedWithin`` and the user did not dismiss it.
    package struct Renewal: Sendable, Hashable {
        /// How long before the lifetime's end the renewal goes out (spread over the first half of that window).
        package var before: Duration
        /// The feed must have been updated within this long for its followers to be renewed.
        package var ifUpdatedWithin: Duration
        /// The alert the renewal shows; `nil`: the feed's latest start's alert, without its sound.
        package var alert: LiveActivityAlert?

        package init(before: Duration, ifUpdatedWithin: Duration, alert: LiveActivityAlert? = nil) {
            self.before = before
            self.ifUpdatedWithin = ifUpdatedWithin
            self.alert = alert
        }
    }

    /// A feed as stored, with its followers. It is encoded as the API shows it (`GET /v1/apps/{bundleId}/feeds/{feedKey}`).
    package struct Feed: Sendable, Hashable, Encodable {
        package var id: Int64
        package var feedKey: String
        package var attributesType: String
        package var attributes: RawJSON
        package var contentState: RawJSON?
        package var state: FeedState
        /// The last accepted timestamp (UNIX seconds).
        package var lastTimestamp: Int64?
        /// How long after an update the activity turns stale, if the feed says.
        package var staleAfter: Duration?
        /// The feed's live channel (APNs id), if it has one.
        package var channelID: String?
        /// Running activities that follow it with their own token.
        package var tokenFollowers: Int
        /// Running activities that follow it on its channel.
        package var channelFollowers: Int
        /// Its latest start, update or end, if it had one.
        package var lastUpdate: LastUpdate?
        /// Devices its starts were sent to (pushes APNs refused aside).
        package var startsSent: Int = 0
        /// Of those, devices whose app has not registered the started activity with the feed, though the start
        /// went out longer ago than the registration timeout: the "9 of 14 starts got no token back" failure.
        package var startsUnregistered: Int = 0
        /// Of those, the ones whose registration timeout has passed, and of these, the ones the device's app
        /// confirmed by registering the started activity within it.
        package var startsDue: Int = 0
        package var startsConfirmed: Int = 0
        /// Starts that waited for their device's push-to-start budget (or still wait), and those of them dropped.
        package var startsDeferred: Int = 0
        package var startsDropped: Int = 0
        /// Its renewal policy, if it has one.
        package var renewal: Renewal?

        /// Of the starts whose registration timeout has passed, the share the app confirmed by registering the
        /// activity in time: the one honest signal of starts a device dropped in silence. `nil` before any such start.
        package var startConfirmationRatio: Double? {
            StartConfirmations.ratio(confirmed: self.startsConfirmed, due: self.startsDue)
        }

        /// A feed's latest update, in short.
        package struct LastUpdate: Sendable, Hashable, Encodable {
            package var updateID: Int64
            package var event: LiveActivityEvent
            /// Its status in the outbox.
            package var status: OutboxStatus
            package var timestamp: Int64
            /// When it was accepted (UNIX seconds).
            package var acceptedAt: Int64

            /// The API's names.
            private enum CodingKeys: String, CodingKey {
                case updateID = "updateId"
                case event, status, timestamp, acceptedAt
            }
        }

        /// The API's names.
        private enum CodingKeys: String, CodingKey {
            case feedKey, attributesType, attributes, contentState, state, lastTimestamp, staleAfterSeconds
            case channelID = "channelId"
            case followers, lastUpdate, starts, renewal
        }

        /// The counts `followers` (`token`, `channel`) and `starts` hold.
        private enum CountKeys: String, CodingKey {
            case token, channel, sent, unregistered, confirmed, confirmationRatio, deferred, dropped
        }

        /// As the API shows it: `staleAfterSeconds` in whole seconds, the followers and starts counted in objects
        /// of their own.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.feedKey, forKey: .feedKey)
            try container.encode(self.attributesType, forKey: .attributesType)
            try container.encode(self.attributes, forKey: .attributes)
            try container.encodeIfPresent(self.contentState, forKey: .contentState)
            try container.encode(self.state.rawValue, forKey: .state)
            try container.encodeIfPresent(self.lastTimestamp, forKey: .lastTimestamp)
            try container.encodeIfPresent(self.staleAfter?.wholeSeconds, forKey: .staleAfterSeconds)
            try container.encodeIfPresent(self.channelID, forKey: .channelID)
            var followers = container.nestedContainer(keyedBy: CountKeys.self, forKey: .followers)
            try followers.encode(self.tokenFollowers, forKey: .token)
            try followers.encode(self.channelFollowers, forKey: .channel)
            try container.encodeIfPresent(self.lastUpdate, forKey: .lastUpdate)
            var starts = container.nestedContainer(keyedBy: CountKeys.self, forKey: .starts)
            try starts.encode(self.startsSent, forKey: .sent)
            try starts.encode(self.startsUnregistered, forKey: .unregistered)
            try starts.encode(self.startsConfirmed, forKey: .confirmed)
            try starts.encodeIfPresent(self.startConfirmationRatio, forKey: .confirmationRatio)
            try starts.encode(self.startsDeferred, forKey: .deferred)
            try starts.encode(self.startsDropped, forKey: .dropped)
            try container.encodeIfPresent(self.renewal, forKey: .renewal)
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Creates a feed, or updates a not-yet-started one's attributes.
    /// - Returns: The feed and whether it was created.
    /// - Throws: ``StoreError`` `conflict` when the feed exists with another attributes type, or has started and
    ///   the attributes differ (activities already show them); `invalid` for attributes that are not an object.
    package func put(_ definition: Definition) async throws -> (feed: Feed, created: Bool) {
        guard definition.attributes.isObject else {
            throw StoreError(.invalid, "attributes must be a JSON object", field: "attributes")
        }
        if let stale = definition.staleAfter, stale <= .zero {
            throw StoreError(.invalid, "staleAfterSeconds must be positive", field: "staleAfterSeconds")
        }
        if let grace = definition.staleGrace, grace < .zero {
            throw StoreError(.invalid, "staleGraceSeconds must not be negative", field: "staleGraceSeconds")
        }
        if let renewal = definition.renewal, renewal.before <= .zero || renewal.ifUpdatedWithin <= .zero {
            throw StoreError(.invalid, "renewal.before and renewal.ifUpdatedWithin must be positive", field: "renewal")
        }
        let renewal = (
            before: definition.renewal?.before.wholeSeconds,
            ifUpdatedWithin: definition.renewal?.ifUpdatedWithin.wholeSeconds,
            alert: definition.renewal?.alert?.jsonText
        )
        let created: Bool
        do {
            created = try await self.client.withGuardedTransaction(logger: self.logger) { connection in
                let rows = try await connection.query(
                    "SELECT attributes_type, attributes, state FROM feeds WHERE app_id = \(definition.appID) AND feed_key = \(definition.feedKey) FOR UPDATE",
                    logger: self.logger
                )
                var existing: (attributesType: String, attributes: String, state: FeedState)?
                for try await row in rows.decode((String, String, FeedState).self) { existing = row }
                guard let existing else {
                    try await connection.query(
                        """
                        INSERT INTO feeds (app_id, feed_key, attributes_type, attributes, stale_after_seconds, stale_grace_seconds,
                                           renewal_before, renewal_if_updated_within, renewal_alert)
                        VALUES (\(definition.appID), \(definition.feedKey), \(definition.attributesType), \(definition.attributes.text),
                                \(definition.staleAfter?.wholeSeconds), \(definition.staleGrace?.wholeSeconds),
                                \(renewal.before), \(renewal.ifUpdatedWithin), \(renewal.alert))
                        """,
                        logger: self.logger
                    )
                    return true
                }
                guard existing.attributesType == definition.attributesType else {
                    throw StoreError(.conflict, "the feed's attributes type is \(existing.attributesType)", field: "attributesType")
                }
                guard existing.state == .created || existing.attributes == definition.attributes.text else {
                    throw StoreError(.conflict, "the feed has started: its attributes can no longer change", field: "attributes")
                }
                try await connection.query(
                    """
                    UPDATE feeds SET attributes = \(definition.attributes.text), stale_after_seconds = \(definition.staleAfter?.wholeSeconds),
                        stale_grace_seconds = \(definition.staleGrace?.wholeSeconds), renewal_before = \(renewal.before),
                        renewal_if_updated_within = \(renewal.ifUpdatedWithin), renewal_alert = \(renewal.alert), updated_at = now()
                    WHERE app_id = \(definition.appID) AND feed_key = \(definition.feedKey)
                    """,
                    logger: self.logger
                )
                return false
            }
        } catch let error as PostgresTransactionError {
            if let storeError = error.closureError as? StoreError { throw storeError }
            if StoreError.isUniqueViolation(error) { throw StoreError(.conflict, "the feed was created concurrently; retry") }
            throw error
        }
        guard let feed = try await self.get(appID: definition.appID, feedKey: definition.feedKey) else {
            throw StoreError(.notFound, "the feed vanished")
        }
        return (feed, created)
    }

    /// How long after a start its device's app has to register the activity before the start counts as
    /// unregistered (``Feed/startsUnregistered``), unless a read says otherwise: 5 minutes.
    package static let defaultRegistrationTimeout = Duration.seconds(300)

    /// A feed with its channel, follower counts, last update and starts, or `nil`.
    /// - Parameter registrationTimeout: How long after which a start with no registered activity counts as
    ///   unregistered.
    package func get(appID: Int64, feedKey: String, registrationTimeout: Duration = Self.defaultRegistrationTimeout) async throws -> Feed? {
        try await self.feeds(appID: appID, only: feedKey, after: nil, limit: 1, registrationTimeout: registrationTimeout).first
    }

    /// The app's feeds in key order, each as ``get(appID:feedKey:registrationTimeout:)`` reads it: at most `limit`,
    /// after the key `after` (a page's last) when one is given.
    package func list(
        appID: Int64,
        after: String? = nil,
        limit: Int = .max,
        registrationTimeout: Duration = Self.defaultRegistrationTimeout
    ) async throws -> [Feed] {
        try await self.feeds(appID: appID, only: nil, after: after, limit: limit, registrationTimeout: registrationTimeout)
    }

    private func feeds(appID: Int64, only feedKey: String?, after: String?, limit: Int, registrationTimeout: Duration) async throws -> [Feed] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT f.id, f.feed_key, f.attributes_type, f.attributes, f.content_state, f.state, f.last_timestamp, f.stale_after_seconds,
                (SELECT c.channel_id FROM channels c WHERE c.feed_id = f.id AND c.state = \(unescaped: ChannelState.active.sql)),
                (SELECT count(*)::int FROM activities a WHERE a.feed_id = f.id AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.channel_id IS NULL),
                (SELECT count(*)::int FROM activities a WHERE a.feed_id = f.id AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.channel_id IS NOT NULL),
                u.id, u.event, u.status, u.timestamp, extract(epoch FROM u.created_at)::bigint,
                coalesce(s.sent, 0), coalesce(s.unregistered, 0), coalesce(s.confirmed, 0), coalesce(s.due, 0),
                f.renewal_before, f.renewal_if_updated_within, f.renewal_alert,
                (SELECT count(*)::int FROM queued_starts q WHERE q.feed_id = f.id AND q.kind = \(unescaped: QueuedStartKind.deferred.sql)),
                (SELECT count(*)::int FROM queued_starts q
                 WHERE q.feed_id = f.id AND q.kind = \(unescaped: QueuedStartKind.deferred.sql) AND q.state = \(unescaped: QueuedStartState.dropped.sql))
            FROM feeds f
            LEFT JOIN LATERAL (SELECT * FROM updates u WHERE u.feed_id = f.id ORDER BY u.id DESC LIMIT 1) u ON true
            LEFT JOIN LATERAL (
                SELECT count(*)::int AS sent,
                    count(*) FILTER (
                        WHERE s.started_at < now() - make_interval(secs => \(registrationTimeout.inSeconds))
                          AND NOT EXISTS (SELECT 1 FROM activities a WHERE a.feed_id = f.id AND a.device_id = s.device_id))::int AS unregistered,
                    count(*) FILTER (WHERE \(unescaped: StartConfirmations.dueSQL("s", timeout: registrationTimeout)))::int AS due,
                    count(*) FILTER (WHERE \(unescaped: StartConfirmations.confirmedSQL("s", timeout: registrationTimeout)))::int AS confirmed
                FROM feed_starts s
                WHERE s.feed_id = f.id
                  AND NOT EXISTS (
                      SELECT 1 FROM deliveries d JOIN push_to_start_tokens p ON p.app_id = f.app_id AND p.token = d.target
                      WHERE d.update_id = s.update_id AND d.target_kind = \(unescaped: DeliveryTargetKind.device.sql) AND p.device_id = s.device_id)
            ) s ON true
            WHERE f.app_id = \(appID) AND (\(feedKey)::text IS NULL OR f.feed_key = \(feedKey))
              AND (\(after)::text IS NULL OR f.feed_key > \(after))
            ORDER BY f.feed_key LIMIT \(min(limit, Int(Int32.max)))
            """,
            logger: self.logger
        )
        var feeds: [Feed] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            var lastUpdate: Feed.LastUpdate?
            if let updateID = try cells[11].decode(Int64?.self) {
                lastUpdate = Feed.LastUpdate(
                    updateID: updateID,
                    event: try cells[12].decode(LiveActivityEvent.self),
                    status: try cells[13].decode(OutboxStatus.self),
                    timestamp: try cells[14].decode(Int64.self),
                    acceptedAt: try cells[15].decode(Int64.self)
                )
            }
            feeds.append(
                Feed(
                    id: try cells[0].decode(Int64.self),
                    feedKey: try cells[1].decode(String.self),
                    attributesType: try cells[2].decode(String.self),
                    attributes: try RawJSON(validating: try cells[3].decode(String.self)),
                    contentState: try cells[4].decode(String?.self).map { try RawJSON(validating: $0) },
                    state: try cells[5].decode(FeedState.self),
                    lastTimestamp: try cells[6].decode(Int64?.self),
                    staleAfter: try cells[7].decode(Int?.self).map { Duration.seconds($0) },
                    channelID: try cells[8].decode(String?.self),
                    tokenFollowers: try cells[9].decode(Int.self),
                    channelFollowers: try cells[10].decode(Int.self),
                    lastUpdate: lastUpdate,
                    startsSent: try cells[16].decode(Int.self),
                    startsUnregistered: try cells[17].decode(Int.self),
                    startsDue: try cells[19].decode(Int.self),
                    startsConfirmed: try cells[18].decode(Int.self),
                    startsDeferred: try cells[23].decode(Int.self),
                    startsDropped: try cells[24].decode(Int.self),
                    renewal: try Self.renewal(
                        before: cells[20].decode(Int?.self),
                        ifUpdatedWithin: cells[21].decode(Int?.self),
                        alert: cells[22].decode(String?.self)
                    )
                )
            )
        }
        return feeds
    }

    /// A feed's renewal policy from its columns.
    private static func renewal(before: Int?, ifUpdatedWithin: Int?, alert: String?) -> Renewal? {
        guard let before, let ifUpdatedWithin else { return nil }
        return Renewal(before: .seconds(before), ifUpdatedWithin: .seconds(ifUpdatedWithin), alert: alert.flatMap(LiveActivityAlert.init(jsonText:)))
    }
}
