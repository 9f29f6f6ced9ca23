import Foundation
import LivecastCore
import PostgresNIO

extension Activities {
    /// The feed an activity's registration names.
    struct FollowedFeed {
        var id: Int64
        var key: String
        var hasEnded: Bool

        /// What a client key hears of a feed it cannot follow, whatever the reason.
        static func unfollowable(_ feedKey: String) -> StoreError {
            StoreError(.notFound, "no feed \(feedKey) that an activity of this type can follow", field: "feed")
        }

        /// The refusal of an activity that cannot follow the ended feed.
        /// - Parameter hidingWhy: Answer as for any other feed it cannot follow (a client key's request).
        func endedError(hidingWhy: Bool) -> StoreError {
            hidingWhy ? Self.unfollowable(self.key) : StoreError(.conflict, "the feed has ended", field: "feed")
        }
    }

    /// Ends, in its registration's transaction, an activity reported after its feed ended, though the feed's start or
    /// a renewal started it before: the feed's end never reached it. A token-based one gets the end on its own token,
    /// with the feed's last content state and its end's dismissal date; a channel-based one heard the end on the
    /// channel, if it was there for it, and is only recorded as ended (a second broadcast would reach every follower).
    func endAfterItsFeed(
        _ feed: FollowedFeed,
        activityID: Int64,
        key: String,
        appID: Int64,
        channelBased: Bool,
        on connection: PostgresConnection
    ) async throws {
        if channelBased {
            try await connection.query(
                "UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now() WHERE id = \(activityID)",
                logger: self.logger
            )
            return
        }
        let ends = try await connection.query(
            """
            SELECT dismissal_date FROM updates
            WHERE feed_id = \(feed.id) AND event = \(unescaped: LiveActivityEvent.end.sql) ORDER BY id DESC LIMIT 1
            """,
            logger: self.logger
        )
        var dismissalDate: Int?
        for try await date in ends.decode(Int?.self) { dismissalDate = date }
        _ = try await ActivityUpdates.endAfterItsFeed(
            appID: appID,
            activityKey: key,
            dismissalDate: dismissalDate,
            on: connection,
            logger: self.logger
        )
    }
}
