import LivecastCore
import LivecastStore

/// One push in a record or the delivery log.
struct PushRecordBody: Encodable {
    let apnsId: String
    let updateId: Int64
    let event: String
    let timestamp: Int64
    let staleDate: Int64?
    /// `activity` (an update token), `pushToStart` or `channel`.
    let targetKind: String
    /// The device token or the channel id.
    let target: String
    let activityId: String?
    let deviceId: String?
    /// `delivered`, `failed`, `retrying`, `gaveUp`, `pending` or `superseded`.
    let outcome: String
    /// APNs' HTTP status of the last try.
    let status: Int?
    let reason: String?
    let attempts: Int?
    /// When it was last tried or, untried, accepted (UNIX seconds).
    let at: Int64

    init(_ record: PushRecord) {
        self.apnsId = record.apnsID
        self.updateId = record.updateID
        self.event = record.event
        self.timestamp = record.timestamp
        self.staleDate = record.staleDate
        self.targetKind = Self.name(of: record.targetKind)
        self.target = record.target
        self.activityId = record.activityID
        self.deviceId = record.deviceID
        self.outcome = record.outcome.rawValue
        self.status = record.status
        self.reason = record.reason
        self.attempts = record.attempts
        self.at = record.at
    }

    static func name(of kind: PushID.TargetKind) -> String {
        switch kind {
        case .activity: "activity"
        case .pushToStart: "pushToStart"
        case .channel: "channel"
        }
    }
}

/// `GET /v1/apps/{bundleId}/activities/{activityId}`.
struct ActivityRecordBody: Encodable {
    let activityId: String
    let attributesType: String
    let feed: String?
    /// `token` or `channel`.
    let kind: String
    /// `starting`, `active`, `stale`, `ended` or `dismissed`.
    let state: String
    let token: String?
    let channelId: String?
    let deviceId: String?
    let userId: String?
    let osVersion: String?
    let startedAt: Int64
    let endedAt: Int64?
    let dismissalDate: Int64?
    let timeline: [Event]

    /// One moment of the timeline.
    struct Event: Encodable {
        /// `registered`, `tokenRegistered`, `tokenInvalidated`, `push`, `stale`, `ended` or `dismissed`.
        let type: String
        let at: Int64
        let token: String?
        let generation: Int?
        let reason: String?
        let push: PushRecordBody?
    }

    init(_ record: ActivityRecord) {
        self.activityId = record.activityID
        self.attributesType = record.attributesType
        self.feed = record.feedKey
        self.kind = record.kind
        self.state = record.state.rawValue
        self.token = record.token
        self.channelId = record.channelID
        self.deviceId = record.deviceID
        self.userId = record.userID
        self.osVersion = record.osVersion
        self.startedAt = record.startedAt
        self.endedAt = record.endedAt
        self.dismissalDate = record.dismissalDate
        self.timeline = record.timeline.map {
            Event(
                type: $0.kind.rawValue,
                at: $0.at,
                token: $0.token,
                generation: $0.generation,
                reason: $0.reason,
                push: $0.push.map(PushRecordBody.init)
            )
        }
    }
}

/// `GET /v1/apps/{bundleId}/deliveries`.
struct DeliveryPageBody: Encodable {
    let deliveries: [PushRecordBody]
    /// The `after` of the next page; absent on the last.
    let next: Int64?

    init(_ page: DeliveryLog.Page) {
        self.deliveries = page.records.map(PushRecordBody.init)
        self.next = page.next
    }
}
