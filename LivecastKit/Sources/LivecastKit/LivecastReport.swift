/// One thing a device tells Livecast: a push-to-start token, an activity and its update token or channel, that an
/// activity ended or was dismissed, or that the device is gone.
///
/// A ``LivecastClient`` keeps reports until Livecast acknowledges them, and hands them back in its
/// ``LivecastEvent``s.
public struct LivecastReport: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What the report says. Codable, so that a pending report outlives the app.
    enum Content: Sendable, Hashable, Codable {
        /// `userID`: the user the registration is bound to (``LivecastClient/identify(userID:assertion:)``), if any.
        /// `pending`: `true` for an activity the app scheduled that has not started yet (iOS 26 `.pending`).
        case pushToStartToken(attributesType: String, token: String, frequentUpdatesEnabled: Bool?, osVersion: String?, userID: String? = nil)
        case pushToStartTokenRemoval(attributesType: String)
        case activity(
            id: String,
            attributesType: String,
            feed: String?,
            pushToken: String?,
            channelID: String?,
            osVersion: String?,
            userID: String? = nil,
            pending: Bool? = nil
        )
        case activityEnded(id: String)
        case activityDismissed(id: String)
        case deviceUnregistration
    }

    /// Reports of one lane go out one at a time, in order; lanes go side by side, except the device's, which waits
    /// for every report before it and holds back every report after it.
    enum Lane: Hashable {
        case pushToStart(attributesType: String)
        case activity(id: String)
        case device
    }

    let content: Content

    init(_ content: Content) { self.content = content }

    /// The activity the report is about, if any.
    public var activityID: String? {
        switch self.content {
        case .activity(let id, _, _, _, _, _, _, _), .activityEnded(let id), .activityDismissed(let id): id
        case .pushToStartToken, .pushToStartTokenRemoval, .deviceUnregistration: nil
        }
    }

    /// The `ActivityAttributes` type name the report is about, if it names one.
    public var attributesType: String? {
        switch self.content {
        case .pushToStartToken(let type, _, _, _, _), .pushToStartTokenRemoval(let type), .activity(_, let type, _, _, _, _, _, _): type
        case .activityEnded, .activityDismissed, .deviceUnregistration: nil
        }
    }

    /// What the report says, without token values: `push-to-start token for GameAttributes`,
    /// `activity A1 (update token)`, `activity A1 ended`…
    public var description: String {
        switch self.content {
        case .pushToStartToken(let type, _, _, _, _): "push-to-start token for \(type)"
        case .pushToStartTokenRemoval(let type): "removal of the push-to-start token for \(type)"
        case .activity(let id, _, _, let token, let channel, _, _, let pending):
            "activity \(id) (\(token != nil ? "update token" : channel != nil ? "channel" : "no token yet")\(pending == true ? ", pending" : ""))"
        case .activityEnded(let id): "activity \(id) ended"
        case .activityDismissed(let id): "activity \(id) dismissed"
        case .deviceUnregistration: "unregistration of the device"
        }
    }

    var lane: Lane {
        switch self.content {
        case .pushToStartToken(let type, _, _, _, _), .pushToStartTokenRemoval(let type): .pushToStart(attributesType: type)
        case .activity(let id, _, _, _, _, _, _, _), .activityEnded(let id), .activityDismissed(let id): .activity(id: id)
        case .deviceUnregistration: .device
        }
    }

    /// What Livecast learns from it, which a later report of the same subject replaces: the key under which the last
    /// acknowledged content is remembered.
    var subject: String {
        switch self.lane {
        case .pushToStart(let type): "push-to-start/\(type)"
        case .activity(let id): Self.subject(ofActivity: id)
        case .device: "device"
        }
    }

    /// The ``subject`` of an activity's reports.
    static func subject(ofActivity id: String) -> String { "activity/\(id)" }

    /// Whether a `404` means the work is already done: a removal of something Livecast no longer has.
    var isRemoval: Bool {
        switch self.content {
        case .pushToStartTokenRemoval, .activityEnded, .activityDismissed, .deviceUnregistration: true
        case .pushToStartToken, .activity: false
        }
    }

    /// Whether the report says the activity is over, after which no registration of it is sent.
    var endsActivity: Bool {
        switch self.content {
        case .activityEnded, .activityDismissed: true
        default: false
        }
    }

    /// The user the report binds the device's registration to, if any.
    public var userID: String? {
        switch self.content {
        case .pushToStartToken(_, _, _, _, let userID), .activity(_, _, _, _, _, _, let userID, _): userID
        case .pushToStartTokenRemoval, .activityEnded, .activityDismissed, .deviceUnregistration: nil
        }
    }
}

extension LivecastReport.Content {
    /// The same registration bound to another user (`nil`: none); other reports are returned as they are.
    func withUser(_ userID: String?) -> Self {
        switch self {
        case .pushToStartToken(let type, let token, let frequent, let osVersion, _):
            .pushToStartToken(attributesType: type, token: token, frequentUpdatesEnabled: frequent, osVersion: osVersion, userID: userID)
        case .activity(let id, let type, let feed, let pushToken, let channelID, let osVersion, _, let pending):
            .activity(
                id: id,
                attributesType: type,
                feed: feed,
                pushToken: pushToken,
                channelID: channelID,
                osVersion: osVersion,
                userID: userID,
                pending: pending
            )
        case .pushToStartTokenRemoval, .activityEnded, .activityDismissed, .deviceUnregistration:
            self
        }
    }

    /// The same activity registration, `pending` (scheduled, not started yet) or not; other reports as they are.
    func withPending(_ pending: Bool) -> Self {
        guard case .activity(let id, let type, let feed, let pushToken, let channelID, let osVersion, let userID, _) = self else { return self }
        return .activity(
            id: id,
            attributesType: type,
            feed: feed,
            pushToken: pushToken,
            channelID: channelID,
            osVersion: osVersion,
            userID: userID,
            pending: pending ? true : nil
        )
    }

    /// Whether it registers an activity with what Livecast updates it through: its update token or its channel.
    var givesActivityAddress: Bool {
        guard case .activity(_, _, _, let pushToken, let channelID, _, _, _) = self else { return false }
        return pushToken != nil || channelID != nil
    }

    /// The feed an activity registration names, if any.
    var feed: String? {
        guard case .activity(_, _, let feed, _, _, _, _, _) = self else { return nil }
        return feed
    }

    /// Whether it registers something that stays live in Livecast until replaced: a push-to-start token, or an
    /// activity (with its token or channel). Those are what a re-report keeps alive and what a user is bound to.
    var isRegistration: Bool {
        switch self {
        case .pushToStartToken, .activity: true
        case .pushToStartTokenRemoval, .activityEnded, .activityDismissed, .deviceUnregistration: false
        }
    }
}
