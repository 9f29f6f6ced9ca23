package import LivecastCore

/// What a backend's update or end says, whatever it goes to (a standalone activity or a feed).
package struct UpdateContent: Sendable, Hashable {
    /// `.update` or `.end`; `.start` only for a feed's start (``FeedStarts``).
    package var event: LiveActivityEvent
    /// Required for an update; an end without one keeps the last content state.
    package var contentState: RawJSON?
    /// UNIX seconds; the server's time when `nil`.
    package var timestamp: Int?
    /// UNIX seconds; a feed's update defaults it to the timestamp plus the feed's `staleAfterSeconds`.
    package var staleDate: Int?
    /// Only on an end: when the ended activity leaves the Lock Screen, at most 4 hours after the end (clamped).
    package var dismissalDate: Int?
    package var alert: LiveActivityAlert?
    package var relevanceScore: Double?
    /// 5 or 10; 10 when an alert is given, else 5, when `nil`.
    package var priority: Int?
    /// A retried request with the same key gets the first answer and stores nothing.
    package var idempotencyKey: IdempotencyKey?

    package init(event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
        self.event = event
        self.contentState = contentState
        self.timestamp = timestamp
    }

    /// The payload this content makes at `timestamp`.
    /// - Parameters:
    ///   - contentState: The content state to send (this one, or the last one kept for an end).
    ///   - staleDate: The `stale-date` to send, once the target's defaults are applied.
    /// - Returns: The payload and whether its `dismissal-date` was clamped to 4 hours after the end.
    func payload(timestamp: Int, contentState: RawJSON?, staleDate: Int?) -> (payload: LiveActivityPayload, dismissalDateClamped: Bool) {
        var payload = LiveActivityPayload(event: self.event, timestamp: timestamp, contentState: contentState)
        payload.staleDate = staleDate
        payload.alert = self.alert
        payload.relevanceScore = self.relevanceScore
        guard self.event == .end else {
            payload.dismissalDate = self.dismissalDate
            return (payload, false)
        }
        let (dismissalDate, clamped) = OutboxRules.dismissalDate(requested: self.dismissalDate, timestamp: timestamp)
        payload.dismissalDate = dismissalDate
        return (payload, clamped)
    }
}
