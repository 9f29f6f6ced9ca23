package import PostgresNIO

/// A token-based follower of a feed, with its live update token.
package struct Follower: Sendable {
    package var activityID: Int64
    package var tokenID: Int64
    package var token: String
    /// Whether a client key registered the token and APNs has yet to accept a push to it.
    package var isUnproven: Bool
}

/// A member of a start's audience: a live push-to-start token of the feed's attributes type.
package struct AudienceMember: Sendable {
    package var tokenRowID: Int64
    package var deviceID: String
    package var token: String
    /// Whether the device runs iOS 18 or later (it can start on the feed's channel).
    package var onIOS18: Bool
    /// Whether a client key registered the token and APNs has yet to accept a push to it.
    package var isUnproven: Bool

    /// SQL for whether a token's `os_version` (a SQL expression) is iOS 18 or later: false when it is missing or
    /// does not start with a number.
    static func onIOS18SQL(osVersion: String) -> String {
        "coalesce(CASE WHEN split_part(\(osVersion), '.', 1) ~ '^[0-9]{1,4}$' THEN split_part(\(osVersion), '.', 1)::int >= 18 END, false)"
    }
}

extension Outbox {
    /// The next page of a feed's token-based followers after `cursor` and up to `upper`, in keyset order
    /// (``FollowerPage``).
    package func followers(
        ofFeed feedID: Int64,
        after cursor: Int64,
        through upper: Int64,
        limit: Int,
        on connection: PostgresConnection
    ) async throws -> [Follower] {
        var page: [Follower] = []
        page.reserveCapacity(limit)
        let statement = FollowerPage(feedID: feedID, after: cursor, through: upper, limit: limit)
        for try await (activityID, tokenID, token, isUnproven) in try await connection.execute(statement, logger: self.logger) {
            page.append(Follower(activityID: activityID, tokenID: tokenID, token: token, isUnproven: isUnproven))
        }
        return page
    }

    /// The next page of a start's audience after its cursor: the live push-to-start tokens of the feed's
    /// attributes type, in keyset order, but for devices that already run an activity of the feed (one the app
    /// started or scheduled itself included: a second would be a duplicate) and, unless the start includes them,
    /// devices whose user dismissed one (``DismissedBy/user``).
    package func audience(of claim: FanOutClaim, limit: Int, on connection: PostgresConnection) async throws -> [AudienceMember] {
        let rows = try await connection.query(
            """
            SELECT t.id, t.device_id, t.token, \(unescaped: AudienceMember.onIOS18SQL(osVersion: "t.os_version")), t.unproven
            FROM push_to_start_tokens t
            WHERE t.app_id = \(claim.appID) AND t.attributes_type = \(claim.attributesType) AND t.invalidated_at IS NULL AND t.id > \(claim.cursor)
              AND (\(claim.audienceKind) = 'everyone'
                   OR (\(claim.audienceKind) = 'devices' AND t.device_id = ANY(\(claim.audience ?? [])))
                   OR (\(claim.audienceKind) = 'users' AND t.user_id = ANY(\(claim.audience ?? []))))
              AND NOT EXISTS (
                  SELECT 1 FROM activities a
                  WHERE a.app_id = t.app_id AND a.device_id = t.device_id AND a.feed_id = \(claim.feedID)
                    AND (a.state IN \(unescaped: ActivityState.runningSQL)
                         OR (a.dismissed_by = \(unescaped: DismissedBy.user.sql) AND NOT \(claim.includesDismissed))))
            ORDER BY t.id
            LIMIT \(limit)
            """,
            logger: self.logger
        )
        var page: [AudienceMember] = []
        for try await (id, deviceID, token, onIOS18, isUnproven) in rows.decode((Int64, String, String, Bool, Bool).self) {
            page.append(AudienceMember(tokenRowID: id, deviceID: deviceID, token: token, onIOS18: onIOS18, isUnproven: isUnproven))
        }
        return page
    }

    /// Ends a feed's running channel-based activities, as its end was broadcast.
    package func endChannelFollowers(of claim: FanOutClaim, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), last_timestamp = \(claim.timestamp), dismissal_date = \(claim.dismissalDate)
            WHERE feed_id = \(claim.feedID) AND channel_id IS NOT NULL AND state IN \(unescaped: ActivityState.runningSQL)
            """,
            logger: self.logger
        )
    }

    /// Ends these running activities of a page walked by an end.
    package func endActivities(_ activityIDs: [Int64], timestamp: Int, dismissalDate: Int?, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), last_timestamp = \(timestamp), dismissal_date = \(dismissalDate)
            WHERE id = ANY(\(activityIDs)) AND state IN \(unescaped: ActivityState.runningSQL)
            """,
            logger: self.logger
        )
    }
}
