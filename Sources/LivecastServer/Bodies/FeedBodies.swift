import LivecastCore
import LivecastStore

/// `PUT /v1/apps/{bundleId}/feeds/{feedKey}`.
struct FeedBody: Decodable {
    let attributesType: String
    /// The static `ActivityAttributes`, a JSON object.
    let attributes: RawJSON
    /// Give the feed a broadcast channel, if it has none.
    let channel: FeedChannelBody?
    let staleAfterSeconds: Int?
    /// Seconds after its `stale-date` before the reaper ends the feed; the reaper's `--stale-grace` when absent.
    let staleGraceSeconds: Int?
}

/// A feed's `channel` request.
struct FeedChannelBody: Decodable {
    let storagePolicy: String
}

/// A feed with its state, channel and follower counts.
struct FeedResponseBody: Encodable {
    let feedKey: String
    let attributesType: String
    let attributes: RawJSON
    let contentState: RawJSON?
    /// `created`, `active` or `ended`.
    let state: String
    /// The last accepted timestamp (UNIX seconds).
    let lastTimestamp: Int64?
    let staleAfterSeconds: Int?
    /// The feed's live broadcast channel.
    let channelId: String?
    let followers: Followers
    let lastUpdate: LastUpdate?
    let starts: Starts

    /// Running activities following the feed.
    struct Followers: Encodable {
        /// With their own update token.
        let token: Int
        /// On the feed's channel.
        let channel: Int
    }

    /// Devices the feed's starts went to, and how many of their apps never registered the started activity.
    struct Starts: Encodable {
        let sent: Int
        /// Started longer ago than the registration timeout with no activity registered for the feed.
        let unregistered: Int
    }

    /// The feed's latest start, update or end.
    struct LastUpdate: Encodable {
        let updateId: Int64
        let event: String
        let status: String
        let timestamp: Int64
        /// When it was accepted (UNIX seconds).
        let acceptedAt: Int64
    }

    init(_ feed: Feeds.Feed) {
        self.feedKey = feed.feedKey
        self.attributesType = feed.attributesType
        self.attributes = feed.attributes
        self.contentState = feed.contentState
        self.state = feed.state
        self.lastTimestamp = feed.lastTimestamp
        self.staleAfterSeconds = feed.staleAfter.map { Int($0.wholeSeconds) }
        self.channelId = feed.channelID
        self.followers = Followers(token: feed.tokenFollowers, channel: feed.channelFollowers)
        self.starts = Starts(sent: feed.startsSent, unregistered: feed.startsUnregistered)
        self.lastUpdate = feed.lastUpdate.map {
            LastUpdate(updateId: $0.updateID, event: $0.event, status: $0.status, timestamp: $0.timestamp, acceptedAt: $0.acceptedAt)
        }
    }
}

/// `GET /v1/apps/{bundleId}/feeds`: a page of feeds.
struct FeedPageBody: Encodable {
    let feeds: [FeedResponseBody]
    /// The `after` of the next page (a feed key); absent on the last.
    let next: String?
}
