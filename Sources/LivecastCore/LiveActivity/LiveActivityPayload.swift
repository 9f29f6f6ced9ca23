/// A Live Activity push payload: the `aps` dictionary of an ActivityKit push, plus custom keys beside it.
///
/// Dates are UNIX seconds. `content-state` and `attributes` are kept as the backend wrote them.
/// Build one with ``start(timestamp:attributesType:attributes:contentState:alert:)``, ``update(timestamp:contentState:)``
/// or ``end(timestamp:contentState:dismissalDate:)``, adjust the optional fields, then call ``validated(for:)``
/// to get the exact bytes to send.
public struct LiveActivityPayload: Sendable, Hashable {
    /// `aps.event`.
    public var event: LiveActivityEvent
    /// `aps.timestamp`: seconds since 1970. Devices ignore a push that is not newer than the last one they applied.
    public var timestamp: Int
    /// `aps.content-state`: the `ActivityAttributes.ContentState`, as JSON.
    public var contentState: RawJSON?
    /// `aps.stale-date`: when the activity turns stale, in seconds since 1970.
    public var staleDate: Int?
    /// `aps.dismissal-date` (end only): when an ended activity leaves the Lock Screen, in seconds since 1970.
    public var dismissalDate: Int?
    /// `aps.relevance-score`: orders the app's concurrent activities.
    public var relevanceScore: Double?
    /// `aps.alert`.
    public var alert: LiveActivityAlert?
    /// `aps.attributes-type` (start only): the Swift name of the `ActivityAttributes` type.
    public var attributesType: String?
    /// `aps.attributes` (start only): the static attributes, as JSON.
    public var attributes: RawJSON?
    /// `aps.input-push-token: 1` (start only, iOS 18+): the started activity gets its own update token.
    public var inputPushToken: Bool
    /// `aps.input-push-channel` (start only, iOS 18+): the started activity subscribes to this broadcast channel.
    public var inputPushChannel: String?
    /// Keys beside `aps`, for the app's own use.
    public var customKeys: [String: RawJSON]

    /// Creates a payload with every optional field empty.
    /// - Parameters:
    ///   - event: The event.
    ///   - timestamp: The timestamp, in seconds since 1970.
    ///   - contentState: The content state. Defaults to none.
    public init(event: LiveActivityEvent, timestamp: Int, contentState: RawJSON? = nil) {
        self.event = event
        self.timestamp = timestamp
        self.contentState = contentState
        self.staleDate = nil
        self.dismissalDate = nil
        self.relevanceScore = nil
        self.alert = nil
        self.attributesType = nil
        self.attributes = nil
        self.inputPushToken = false
        self.inputPushChannel = nil
        self.customKeys = [:]
    }

    /// A push-to-start payload.
    /// - Parameters:
    ///   - timestamp: The timestamp, in seconds since 1970.
    ///   - attributesType: The Swift name of the `ActivityAttributes` type.
    ///   - attributes: The static attributes.
    ///   - contentState: The first content state.
    ///   - alert: The alert the device shows; required for a start.
    public static func start(
        timestamp: Int,
        attributesType: String,
        attributes: RawJSON,
        contentState: RawJSON,
        alert: LiveActivityAlert
    ) -> Self {
        var payload = Self(event: .start, timestamp: timestamp, contentState: contentState)
        payload.attributesType = attributesType
        payload.attributes = attributes
        payload.alert = alert
        return payload
    }

    /// An update payload.
    /// - Parameters:
    ///   - timestamp: The timestamp, in seconds since 1970.
    ///   - contentState: The new content state.
    public static func update(timestamp: Int, contentState: RawJSON) -> Self {
        Self(event: .update, timestamp: timestamp, contentState: contentState)
    }

    /// An end payload.
    /// - Parameters:
    ///   - timestamp: The timestamp, in seconds since 1970.
    ///   - contentState: The final content state. Defaults to none (the device keeps the last one).
    ///   - dismissalDate: When the ended activity leaves the Lock Screen. Defaults to none (the system's 4 hours).
    public static func end(timestamp: Int, contentState: RawJSON? = nil, dismissalDate: Int? = nil) -> Self {
        var payload = Self(event: .end, timestamp: timestamp, contentState: contentState)
        payload.dismissalDate = dismissalDate
        return payload
    }
}
