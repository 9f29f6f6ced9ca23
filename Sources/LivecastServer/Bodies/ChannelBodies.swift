import Hummingbird
import LivecastStore

/// A channel's storage policy, by the names the API uses.
enum StoragePolicyName: String, CaseIterable {
    /// APNs' `0`: broadcasts reach devices listening now.
    case noStorage
    /// APNs' `1`: the latest broadcast is kept for devices that subscribe later.
    case mostRecentMessage

    init(apnsValue: Int) {
        self = apnsValue == 1 ? .mostRecentMessage : .noStorage
    }

    /// Reads a name from a request. - Throws: ``APIError`` 422 for another name.
    init(parsing name: String) throws {
        guard let policy = StoragePolicyName(rawValue: name) else {
            throw APIError.invalid("storagePolicy must be noStorage or mostRecentMessage", field: "storagePolicy")
        }
        self = policy
    }

    var apnsValue: Int { self == .mostRecentMessage ? 1 : 0 }
}

/// `POST /v1/apps/{bundleId}/channels`, and a feed's `channel`.
struct CreateChannelBody: Decodable {
    let storagePolicy: String
    /// The feed the channel belongs to, by key.
    let feed: String?
}

/// A channel as Livecast records it.
struct ChannelBody: ResponseEncodable {
    let channelId: String
    let storagePolicy: String
    let feed: String?
    /// `active`, `orphan`, `retired` or `missing`.
    let state: String
    /// Running activities subscribed to it.
    let followers: Int

    init(_ channel: Channels.Channel) {
        self.channelId = channel.channelID
        self.storagePolicy = StoragePolicyName(apnsValue: channel.storagePolicy).rawValue
        self.feed = channel.feedKey
        self.state = channel.state.rawValue
        self.followers = channel.followers
    }
}

/// `GET /v1/apps/{bundleId}/channels`.
struct ChannelListBody: ResponseEncodable {
    let channels: [ChannelBody]
}

/// `GET /v1/apps/{bundleId}/channels?source=apns`: the channel ids APNs holds for the app.
struct APNsChannelListBody: ResponseEncodable {
    let source = "apns"
    let channelIds: [String]
}
