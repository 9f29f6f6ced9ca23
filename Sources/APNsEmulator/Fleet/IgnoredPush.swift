/// A push a simulated device received and did not apply, and why.
public struct IgnoredPush: Sendable, Hashable, Codable {
    /// Why the device ignored the push.
    public struct Reason: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { self.rawValue }

        /// The push's `timestamp` is not newer than the last one the activity applied.
        public static let olderTimestamp = Reason(rawValue: "olderTimestamp")
        /// The activity has ended; ActivityKit ignores pushes after end.
        public static let afterEnd = Reason(rawValue: "afterEnd")
        /// The activity has left the Lock Screen.
        public static let afterDismissal = Reason(rawValue: "afterDismissal")
        /// A push-to-start token received something other than a start.
        public static let notAStart = Reason(rawValue: "notAStart")
        /// An activity's update token, or a channel, received a start.
        public static let startOnActivity = Reason(rawValue: "startOnActivity")
        /// A start lacked `alert`, `attributes-type`, `attributes` or `content-state`, or broke another rule.
        public static let invalidStart = Reason(rawValue: "invalidStart")
        /// A start's `attributes-type` differs from the push-to-start token's type.
        public static let attributesTypeMismatch = Reason(rawValue: "attributesTypeMismatch")
        /// `input-push-channel` on a device older than iOS 18: the activity does not start.
        public static let channelRequiresIOS18 = Reason(rawValue: "channelRequiresIOS18")
        /// `input-push-channel` names a channel that does not exist.
        public static let unknownChannel = Reason(rawValue: "unknownChannel")
        /// The body is not a Live Activity payload.
        public static let malformedPayload = Reason(rawValue: "malformedPayload")
        /// The device's hourly budget of priority-10 pushes is spent.
        public static let priorityBudgetExceeded = Reason(rawValue: "priorityBudgetExceeded")
        /// The activity is gone from the device (the system or the user removed it) while its token still answers
        /// 200: the push reached APNs and changed nothing.
        public static let activityLost = Reason(rawValue: "activityLost")
        /// A start with the `apns-collapse-id` of an activity the device already shows: a repeated start, not a
        /// second activity.
        public static let duplicateStart = Reason(rawValue: "duplicateStart")
        /// A start over the device's push-to-start budget (``APNsEmulator/PushToStartBudget``): iOS does not start
        /// it, while APNs answered `200`.
        public static let startBudgetExceeded = Reason(rawValue: "startBudgetExceeded")
        /// The alert has a key ActivityKit does not document for a Live Activity (the flat `title-loc-key` /
        /// `loc-key` of ordinary alerts, a `subtitle`): iOS discards the whole push, while APNs answered `200`.
        public static let undocumentedAlertKey = Reason(rawValue: "undocumentedAlertKey")

        /// The drops iOS makes without a word to the server, which a server must avoid rather than discover: the wire
        /// log marks them (``WireRecord/deviceDropped``) and ``WireJudge`` counts each as a violation.
        public static let silentDrops: Set<Reason> = [.startBudgetExceeded, .undocumentedAlertKey, .invalidStart]
    }

    /// Why.
    public var reason: Reason
    /// Details, such as the missing field.
    public var detail: String?
    /// The push's `event`, when it could be read.
    public var event: String?
    /// The push's `timestamp`, when it could be read.
    public var timestamp: Int?
    /// The device's clock when the push arrived, in seconds since 1970.
    public var receivedAt: Int
    /// For ``Reason/olderTimestamp``: the timestamp the activity showed. Equal to ``timestamp`` for a repeated
    /// push; smaller for a push that would have taken the content backwards.
    public var shownTimestamp: Int?
}

extension IgnoredPush {
    /// How many ignored pushes a device, or an activity, remembers.
    static let memory = 100
}

extension [IgnoredPush] {
    /// Remembers one more ignored push, forgetting the oldest beyond ``IgnoredPush/memory``.
    mutating func remember(_ push: IgnoredPush) {
        self.append(push)
        if self.count > IgnoredPush.memory { self.removeFirst(self.count - IgnoredPush.memory) }
    }
}
