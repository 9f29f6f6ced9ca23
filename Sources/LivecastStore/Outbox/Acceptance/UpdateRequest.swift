package import LivecastCore

/// An update or end a backend asks for, of a target of the kind `Kind` names (``ActivityUpdates`` or
/// ``FeedUpdates``; ``FeedStarts`` makes one of its start). Without a `staleDate`, a feed's update gets the timestamp plus the feed's `staleAfterSeconds`,
/// when it has one.
package struct UpdateRequest<Kind>: Sendable, Hashable {
    package var appID: Int64
    /// The target's key, as the API names it: an activity's id, or a feed's key.
    package var targetKey: String
    package var content: UpdateContent
    /// Who asks for an end, as its `activity.ended` events report it. Defaults to the backend.
    package var endedBy: EndedBy = .backend

    package init(appID: Int64, targetKey: String, content: UpdateContent) {
        self.appID = appID
        self.targetKey = targetKey
        self.content = content
    }

    package init(appID: Int64, targetKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
        self.init(appID: appID, targetKey: targetKey, content: UpdateContent(event: event, contentState: contentState, timestamp: timestamp))
    }
}

extension UpdateRequest where Kind == ActivityUpdates {
    /// A standalone activity's update or end.
    package init(appID: Int64, activityKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
        self.init(appID: appID, targetKey: activityKey, event: event, contentState: contentState, timestamp: timestamp)
    }
}

extension UpdateRequest where Kind == FeedUpdates {
    /// A feed's update or end.
    package init(appID: Int64, feedKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
        self.init(appID: appID, targetKey: feedKey, event: event, contentState: contentState, timestamp: timestamp)
    }
}
