import Hummingbird
import LivecastStore

/// `PUT /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}`.
struct PushToStartTokenBody: Decodable {
    /// The token in hex, as ActivityKit's `pushToStartTokenUpdates` gives it.
    let token: String
    let userId: String?
    /// A client key's proof of `userId` (``IdentityAssertions``).
    let userAssertion: String?
    let osVersion: String?
    /// Whether the user allows frequent updates. Defaults to `true`.
    let frequentUpdatesEnabled: Bool?
}

extension PushToStartTokenBody {
    /// The registration it asks for, of a device's token for an attributes type, bound to `userID`.
    func registration(appID: Int64, deviceID: String, attributesType: String, userID: String?) -> PushToStartTokens.Registration {
        PushToStartTokens.Registration(
            appID: appID,
            deviceID: deviceID,
            attributesType: attributesType,
            token: self.token,
            userID: userID,
            osVersion: self.osVersion,
            frequentUpdatesEnabled: self.frequentUpdatesEnabled ?? true
        )
    }
}

/// `PUT /v1/apps/{bundleId}/activities/{activityId}`.
struct ActivityBody: Decodable {
    let attributesType: String
    /// The feed it follows, by key.
    let feed: String?
    /// Its update token in hex (token-based).
    let pushToken: String?
    /// The channel it subscribed to (channel-based).
    let channelId: String?
    let deviceId: String?
    let userId: String?
    /// A client key's proof of `userId` (``IdentityAssertions``).
    let userAssertion: String?
    let osVersion: String?
    /// The app scheduled it to start later (iOS 26's `pending`): it counts as the device's activity of the feed, so
    /// the feed's starts leave the device out.
    let pending: Bool?
}

extension ActivityBody {
    /// The registration it asks for, of an activity or its new update token, bound to `userID`.
    func registration(appID: Int64, activityKey: String, userID: String?) -> Activities.Registration {
        var registration = Activities.Registration(
            appID: appID,
            activityKey: activityKey,
            attributesType: self.attributesType,
            feedKey: self.feed,
            pushToken: self.pushToken,
            channelID: self.channelId,
            deviceID: self.deviceId,
            userID: userID,
            osVersion: self.osVersion
        )
        registration.isPending = self.pending ?? false
        return registration
    }
}

/// The answer to a registration, `{"result":"…"}` with what it did: `created` (`201`), or `rotated`, `moved`,
/// `tokenAdded`, `tokenRotated`, `unchanged` (`200`). There are only these few answers, so each is written once, not for every
/// request (`JSONEncoder` showed in `livecast serve`'s profile under registrations: docs/PERFORMANCE.md).
enum RegistrationAnswer {
    private static let bodies: [String: ByteBuffer] = Dictionary(
        (PushToStartTokens.Result.allCases.map(\.rawValue) + Activities.Result.allCases.map(\.rawValue)).map { ($0, body($0)) },
        uniquingKeysWith: { first, _ in first }
    )

    /// The response for a registration that did `result`.
    static func response(_ result: some RegistrationResult) -> Response {
        let body = Self.bodies[result.rawValue] ?? Self.body(result.rawValue)
        return .json(text: body.readableBytesView, status: result.isCreated ? .created : .ok)
    }

    /// `{"result":"…"}`: the results are identifiers, with nothing to escape.
    private static func body(_ result: String) -> ByteBuffer {
        ByteBuffer(string: #"{"result":"\#(result)"}"#)
    }
}

/// What a push-to-start or activity registration did, as its answer names it.
protocol RegistrationResult: RawRepresentable<String> {
    /// Whether it made a new registration (`201`) rather than changing or refreshing one (`200`).
    var isCreated: Bool { get }
}

extension PushToStartTokens.Result: RegistrationResult {
    var isCreated: Bool { self == .created }
}

extension Activities.Result: RegistrationResult {
    var isCreated: Bool { self == .created }
}
