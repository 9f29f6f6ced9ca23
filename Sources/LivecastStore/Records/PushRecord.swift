package import LivecastCore

/// One push Livecast sent (or owes, or gave up on): an update to one target, with APNs' last answer. Successes
/// are not stored per push: a record is derived from the update's progress and what was stored about the target
/// (a failure, an owed retry, a dead letter), and its `apnsId` is the ``PushID`` the push went out with.
///
/// It is encoded as the API shows it (`GET …/deliveries`, an activity's record).
package struct PushRecord: Sendable, Hashable, Encodable {
    /// Where the push stands.
    package enum Outcome: String, Sendable, Hashable, CaseIterable, Encodable {
        /// APNs accepted it (`200`).
        case delivered
        /// APNs refused it for good (a bad or unregistered token, say), or the transport failed and it was not
        /// carried forward.
        case failed
        /// APNs asked to retry (`429`, `5xx`, a lost connection): it is owed and will be sent again.
        case retrying
        /// Given up past its deadline: a dead letter.
        case gaveUp
        /// Not sent yet.
        case pending
        /// Never sent: a newer update to the same target replaced it first.
        case superseded
    }

    /// The push's `apns-id` (a broadcast's `apns-request-id`).
    package var apnsID: String
    package var updateID: Int64
    package var event: LiveActivityEvent
    /// The `timestamp` the push carried (UNIX seconds).
    package var timestamp: Int64
    /// The push's `stale-date` (UNIX seconds), when it had one.
    package var staleDate: Int64?
    package var targetKind: PushID.TargetKind
    /// The device token, or the channel's id.
    package var target: String
    /// The activity the push went to (its ActivityKit id), for a push to an update token.
    package var activityID: String?
    /// The device whose push-to-start token a start went to.
    package var deviceID: String?
    package var outcome: Outcome
    /// APNs' HTTP status of the last try, when known.
    package var status: Int?
    /// APNs' reason (or the transport's) when it was not delivered.
    package var reason: String?
    /// Tries so far, for a push that is owed or was given up.
    package var attempts: Int?
    /// When it was last tried or, for one not tried yet, accepted (UNIX seconds).
    package var at: Int64

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case apnsID = "apnsId"
        case updateID = "updateId"
        case event, timestamp, staleDate, targetKind, target
        case activityID = "activityId"
        case deviceID = "deviceId"
        case outcome, status, reason, attempts, at
    }

    /// As the API shows it; `targetKind` is `activity` (an update token), `pushToStart`, `channel` or `renewal`.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.apnsID, forKey: .apnsID)
        try container.encode(self.updateID, forKey: .updateID)
        try container.encode(self.event, forKey: .event)
        try container.encode(self.timestamp, forKey: .timestamp)
        try container.encodeIfPresent(self.staleDate, forKey: .staleDate)
        try container.encode(self.targetKindName, forKey: .targetKind)
        try container.encode(self.target, forKey: .target)
        try container.encodeIfPresent(self.activityID, forKey: .activityID)
        try container.encodeIfPresent(self.deviceID, forKey: .deviceID)
        try container.encode(self.outcome, forKey: .outcome)
        try container.encodeIfPresent(self.status, forKey: .status)
        try container.encodeIfPresent(self.reason, forKey: .reason)
        try container.encodeIfPresent(self.attempts, forKey: .attempts)
        try container.encode(self.at, forKey: .at)
    }

    private var targetKindName: String {
        switch self.targetKind {
        case .activity: "activity"
        case .pushToStart: "pushToStart"
        case .channel: "channel"
        case .renewal: "renewal"
        }
    }
}

extension PushID.TargetKind {
    /// The kind's name in `owed_pushes` and `dead_letters`.
    var sqlName: String {
        switch self {
        case .activity: "activity"
        case .pushToStart: "push_to_start"
        case .channel: "channel"
        case .renewal: "renewal"
        }
    }

    /// The kind of an `owed_pushes` or `dead_letters` name.
    init?(sqlName: String) {
        guard let kind = Self.allCases.first(where: { $0.sqlName == sqlName }) else { return nil }
        self = kind
    }
}
