import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Live Activities as devices report them: token-based (with an update token that may rotate) or channel-based,
/// following a feed or standalone.
package struct Activities: DatabaseBacked {
    /// An activity's registration, or a later report of its new update token (the same call).
    package struct Registration: Sendable, Hashable {
        package var appID: Int64
        /// ActivityKit's id for the activity.
        package var activityKey: String
        package var attributesType: String
        /// The feed it follows, by key; `nil` for a standalone activity.
        package var feedKey: String?
        /// Its update token in hex, for a token-based activity (may come in a later call).
        package var pushToken: String?
        /// The APNs id of the channel it subscribed to, for a channel-based activity.
        package var channelID: String?
        package var deviceID: String?
        package var userID: String?
        package var osVersion: String?
        /// Whether the app scheduled it to start later (iOS 26's `pending`): it is recorded `starting`, so the feed's
        /// starts leave its device out, until a report without the flag.
        package var isPending = false

        package init(
            appID: Int64,
            activityKey: String,
            attributesType: String,
            feedKey: String? = nil,
            pushToken: String? = nil,
            channelID: String? = nil,
            deviceID: String? = nil,
            userID: String? = nil,
            osVersion: String? = nil
        ) {
            self.appID = appID
            self.activityKey = activityKey
            self.attributesType = attributesType
            self.feedKey = feedKey
            self.pushToken = pushToken
            self.channelID = channelID
            self.deviceID = deviceID
            self.userID = userID
            self.osVersion = osVersion
        }
    }

    /// What a registration did.
    package enum Result: String, Sendable, Hashable, CaseIterable {
        /// A new activity.
        case created
        /// A known activity reported a new update token; the old one is invalidated (`rotated`) in the same
        /// transaction, so the activity is never without a token.
        case tokenRotated
        /// A known activity reported its first update token.
        case tokenAdded
        /// Nothing changed but the device details.
        case unchanged
    }

    /// What a registration did, and what it leaves for the caller to do.
    package struct Registered: Sendable, Hashable {
        package var result: Result
        /// The activity a renewal replaced, whose end is now due: the registration gave its successor a live update
        /// token, so the old one can be ended (with a past `dismissal-date`) without leaving the user with none.
        package var renewedActivityToEnd: String?
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Registers an activity or records its new update token, in one transaction; see ``record(_:device:)``.
    package func register(_ registration: Registration, device: DeviceScope? = nil) async throws -> Result {
        try await self.record(registration, device: device).result
    }

    /// Registers an activity or records its new update token, in one transaction. A new follower of a feed confirms
    /// the feed's start to its device (`feed_starts.confirmed_at`), and adopts the renewal sent to its device for the
    /// feed, if one is waiting for it: the two are linked (`renewed_from`, `renewed_to`, `activity.renewed`), and a
    /// renewed activity on the feed's channel ends at once (ending it by broadcast would end its successor too). A
    /// start or renewal sent before its feed ended may be reported after: its activity is taken in and ended at once
    /// with the feed's last content state, so it shows the end too
    /// (``endAfterItsFeed(_:activityID:key:appID:channelBased:on:)``).
    /// - Parameter device: The device the caller is held to (a client key's): the activity must be that device's,
    ///   and a new one must fit under the device's cap.
    /// - Throws: ``StoreError``: `invalid` for a malformed token or both a token and a channel; `notFound` for an
    ///   unknown feed or channel, or an activity of another device than `device`'s; `conflict` for an ended
    ///   activity, an ended feed (but for a new activity it started), a retired channel, a token another activity
    ///   holds, or an attributes type that differs from the activity's or the feed's; `deviceLimitReached` for a new
    ///   activity past `device`'s cap.
    package func record(_ registration: Registration, device: DeviceScope? = nil) async throws -> Registered {
        let token = registration.pushToken.flatMap(DeviceToken.normalized)
        if registration.pushToken != nil, token == nil {
            throw StoreError(.invalid, "pushToken must be hex: an even number of 2 to \(DeviceToken.maximumHexDigits) digits", field: "pushToken")
        }
        guard token == nil || registration.channelID == nil else {
            throw StoreError(.invalid, "an activity is token-based or channel-based, not both", field: "channelId")
        }
        do {
            return try await self.client.withGuardedTransaction(logger: self.logger) { connection in
                try await self.record(registration, token: token, device: device, on: connection)
            }
        } catch let error as PostgresTransactionError {
            if let storeError = error.closureError as? StoreError { throw storeError }
            if StoreError.isUniqueViolation(error) {
                throw StoreError(.conflict, "a concurrent registration of this activity or token won; retry")
            }
            throw error
        }
    }

    private func record(
        _ registration: Registration,
        token: String?,
        device: DeviceScope?,
        on connection: PostgresConnection
    ) async throws -> Registered {
        let appID = registration.appID
        let feed = try await self.followedFeed(registration, hidingWhy: device != nil, on: connection)
        let feedID = feed?.id
        let channelRowID = try await self.channelRowID(registration, on: connection)
        var result = Result.unchanged
        // A new activity without an address yet, or one the app scheduled, waits in `starting`.
        let isStarting = token == nil && channelRowID == nil || registration.isPending
        let existing = try await connection.query(
            """
            SELECT id, state, attributes_type, device_id, renewed_from IS NOT NULL FROM activities
            WHERE app_id = \(appID) AND activity_key = \(registration.activityKey)
            FOR UPDATE
            """,
            logger: self.logger
        )
        var activity: (id: Int64, state: ActivityState, attributesType: String, deviceID: String?, isRenewal: Bool)?
        for try await row in existing.decode((Int64, ActivityState, String, String?, Bool).self) { activity = row }
        var isRenewal = activity?.isRenewal ?? false
        let activityID: Int64
        if let activity {
            if let device, activity.deviceID != device.deviceID {
                throw StoreError(.notFound, "no activity \(registration.activityKey) on this device", field: "activityId")
            }
            if let feed, feed.hasEnded { throw feed.endedError(hidingWhy: device != nil) }
            guard activity.state.isRunning else {
                throw StoreError(.conflict, "the activity has ended", field: "activityId")
            }
            guard activity.attributesType == registration.attributesType else {
                throw StoreError(.conflict, "the activity was registered with attributes type \(activity.attributesType)", field: "attributesType")
            }
            activityID = activity.id
            try await connection.query(
                """
                UPDATE activities SET device_id = coalesce(\(registration.deviceID), device_id), user_id = coalesce(\(registration.userID), user_id),
                    os_version = coalesce(\(registration.osVersion), os_version)
                WHERE id = \(activityID)
                """,
                logger: self.logger
            )
        } else {
            if let device { try await self.checkRoom(on: device, appID: appID, connection: connection) }
            let inserted = try await connection.query(
                """
                INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, channel_id, device_id, user_id, os_version, state)
                VALUES (\(appID), \(registration.activityKey), \(registration.attributesType), \(feedID), \(channelRowID),
                        \(registration.deviceID), \(registration.userID), \(registration.osVersion),
                        \(isStarting ? ActivityState.starting : ActivityState.active))
                RETURNING id
                """,
                logger: self.logger
            )
            var id: Int64 = 0
            for try await value in inserted.decode(Int64.self) { id = value }
            activityID = id
            result = .created
            var adoption = Adoption.none
            if let feedID, let deviceID = registration.deviceID {
                adoption = try await self.adopt(activityID, feedID: feedID, deviceID: deviceID, appID: appID, on: connection)
            }
            isRenewal = adoption == .renewal
            if let feed, feed.hasEnded, adoption == .none || isStarting {
                // Only a start or renewal sent before the end is taken in, and only once it can show the end.
                throw feed.endedError(hidingWhy: device != nil)
            }
        }
        if let token {
            let change = try await self.recordToken(token, activityID: activityID, appID: appID, unproven: device != nil, on: connection)
            if result == .unchanged {
                switch change {
                case .replaced: result = .tokenRotated
                case .added: result = .tokenAdded
                case .same: break
                }
            }
        }
        if token != nil || channelRowID != nil, !registration.isPending {
            try await connection.query(
                "UPDATE activities SET state = \(unescaped: ActivityState.active.sql) WHERE id = \(activityID) AND state = \(unescaped: ActivityState.starting.sql)",
                logger: self.logger
            )
        }
        if let feed, feed.hasEnded {
            try await self.endAfterItsFeed(
                feed,
                activityID: activityID,
                key: registration.activityKey,
                appID: appID,
                channelBased: channelRowID != nil,
                on: connection
            )
        }
        let renewedToEnd = isRenewal && result != .unchanged ? try await self.renewedActivityToEnd(by: activityID, on: connection) : nil
        return Registered(result: result, renewedActivityToEnd: renewedToEnd)
    }

    private enum TokenChange {
        case same
        case added
        case replaced
    }

    /// Makes `token` the activity's live update token.
    /// - Parameter unproven: Whether a client key registers it: a new or revived token is then unproven until APNs
    ///   accepts a push to it (migration `0033`).
    private func recordToken(
        _ token: String,
        activityID: Int64,
        appID: Int64,
        unproven: Bool,
        on connection: PostgresConnection
    ) async throws -> TokenChange {
        let holders = try await connection.query(
            "SELECT activity_id, invalidated_at IS NULL FROM activity_tokens WHERE app_id = \(appID) AND token = \(token) FOR UPDATE",
            logger: self.logger
        )
        var holder: (activityID: Int64, isLive: Bool)?
        for try await row in holders.decode((Int64, Bool).self) { holder = row }
        if let holder {
            guard holder.activityID == activityID else {
                throw StoreError(.conflict, "another activity holds this token", field: "pushToken")
            }
            if holder.isLive { return .same }
        }
        // Waits for sends that read the old token, and keeps new ones from reading it until this commits.
        try await connection.query(
            """
            SELECT pg_advisory_xact_lock(\(SendLocks.activityNamespace), \(SendLocks.key(activityID))),
                   pg_advisory_xact_lock(\(SendLocks.feedNamespace), ((coalesce(feed_id, 0) % \(Int64(Int32.max))))::int)
            FROM activities WHERE id = \(activityID)
            """,
            logger: self.logger
        )
        let replaced = try await connection.query(
            """
            UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = 'rotated'
            WHERE activity_id = \(activityID) AND invalidated_at IS NULL RETURNING id
            """,
            logger: self.logger
        )
        var didReplace = false
        for try await _ in replaced.decode(Int64.self) { didReplace = true }
        if holder != nil {
            // The activity went back to an earlier token: revive it as the newest generation.
            try await connection.query(
                """
                UPDATE activity_tokens SET invalidated_at = NULL, invalidation_reason = NULL, registered_at = now(), unproven = \(unproven),
                    generation = (SELECT max(generation) + 1 FROM activity_tokens WHERE activity_id = \(activityID))
                WHERE app_id = \(appID) AND token = \(token)
                """,
                logger: self.logger
            )
        } else {
            try await connection.query(
                """
                INSERT INTO activity_tokens (app_id, activity_id, token, generation, unproven)
                VALUES (\(appID), \(activityID), \(token),
                        coalesce((SELECT max(generation) FROM activity_tokens WHERE activity_id = \(activityID)), 0) + 1, \(unproven))
                """,
                logger: self.logger
            )
        }
        return didReplace ? .replaced : .added
    }

    /// The feed the activity follows, if it names one.
    /// - Parameter hidingWhy: Answer every refusal alike (a client key's request): a published key must not learn
    ///   which feed keys exist, nor their attributes types or states.
    private func followedFeed(_ registration: Registration, hidingWhy: Bool, on connection: PostgresConnection) async throws -> FollowedFeed? {
        guard let feedKey = registration.feedKey else { return nil }
        let rows = try await connection.query(
            "SELECT id, attributes_type, state FROM feeds WHERE app_id = \(registration.appID) AND feed_key = \(feedKey)",
            logger: self.logger
        )
        for try await (id, attributesType, state) in rows.decode((Int64, String, FeedState).self) {
            guard attributesType == registration.attributesType else {
                if hidingWhy { throw FollowedFeed.unfollowable(feedKey) }
                throw StoreError(.conflict, "the feed's attributes type is \(attributesType)", field: "attributesType")
            }
            return FollowedFeed(id: id, key: feedKey, hasEnded: state == .ended)
        }
        throw hidingWhy ? FollowedFeed.unfollowable(feedKey) : StoreError(.notFound, "no feed \(feedKey)", field: "feed")
    }

    private func channelRowID(_ registration: Registration, on connection: PostgresConnection) async throws -> Int64? {
        guard let channelID = registration.channelID else { return nil }
        let rows = try await connection.query(
            "SELECT id, state FROM channels WHERE app_id = \(registration.appID) AND channel_id = \(channelID)",
            logger: self.logger
        )
        for try await (id, state) in rows.decode((Int64, ChannelState).self) {
            guard state == .active else { throw StoreError(.conflict, "the channel is \(state)", field: "channelId") }
            return id
        }
        throw StoreError(.notFound, "no channel \(channelID)", field: "channelId")
    }

    /// Records that the device ended the activity: nothing more is sent to it.
    /// - Parameter deviceID: Ends the activity only if it is this device's (a client key's device).
    /// - Returns: Whether a running activity was ended.
    package func endedByDevice(appID: Int64, activityKey: String, deviceID: String? = nil) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), ended_by = \(EndedBy.device.rawValue)
            WHERE app_id = \(appID) AND activity_key = \(activityKey) AND state IN \(unescaped: ActivityState.runningSQL)
              AND (\(deviceID)::text IS NULL OR device_id = \(deviceID))
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// Applies an APNs verdict on an update token, with the rule of ``PushToStartTokens/invalidate(appID:token:reason:invalidSinceMillis:)``:
    /// `Unregistered`/`ExpiredToken` (with APNs' timestamp) only when APNs learnt it after the token's registration,
    /// anything without a timestamp at once.
    /// - Parameters:
    ///   - tokenID: The `activity_tokens` row.
    ///   - reason: APNs' reason.
    ///   - invalidSinceMillis: The 410 answer's `timestamp`, in milliseconds since 1970.
    /// - Returns: Whether the token was invalidated.
    package func invalidateToken(id tokenID: Int64, reason: String, invalidSinceMillis: Int64?) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = \(reason), apns_invalid_since_ms = \(invalidSinceMillis)
            WHERE id = \(tokenID) AND invalidated_at IS NULL
              AND (\(invalidSinceMillis)::bigint IS NULL OR \(invalidSinceMillis)::bigint > (extract(epoch FROM registered_at) * 1000)::bigint)
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }
}
