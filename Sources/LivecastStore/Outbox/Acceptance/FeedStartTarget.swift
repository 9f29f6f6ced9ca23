import LivecastCore
import Logging
import PostgresNIO

/// A feed as its start sees it: locked as for an update (``FeedTarget``), with the audience the start goes to. The
/// start carries the feed's attributes and asks a device for an update token (`input-push-token`), or, for an iOS 18
/// device on the feed's channel, names the channel (`input-push-channel`): the row keeps both forms.
struct FeedStartTarget: UpdateTarget {
    var feed: FeedTarget
    var audience: FeedStarts.Audience
    /// Whether devices whose user dismissed an activity of the feed are started too.
    var includesDismissed: Bool

    var id: Int64 { self.feed.id }
    var lastTimestamp: Int? { self.feed.lastTimestamp }
    /// A start goes to devices' push-to-start tokens only.
    var destination: PushDestination { .device }
    /// A start replaces no update: the feed's followers still need theirs.
    var coalesces: Bool { false }

    /// The start's payload to a push-to-start token, with the feed's attributes and `input-push-token`.
    /// - Throws: ``StoreError`` `invalid` for a start without a content state or an alert, `payloadTooLarge`.
    func payload(for content: UpdateContent, at timestamp: Int) throws -> (payload: LiveActivityPayload, bytes: String, dismissalDateClamped: Bool) {
        guard let contentState = content.contentState, let alert = content.alert else {
            throw StoreError(.invalid, "a start needs a content state and an alert", field: content.alert == nil ? "alert" : "contentState")
        }
        var payload = LiveActivityPayload.start(
            timestamp: timestamp,
            attributesType: self.feed.attributesType,
            attributes: try RawJSON(validating: self.feed.attributes),
            contentState: contentState,
            alert: alert
        )
        payload.staleDate = self.feed.staleDate(requested: content.staleDate, timestamp: timestamp)
        payload.relevanceScore = content.relevanceScore
        payload.inputPushToken = true
        return (payload, String(decoding: try OutboxRules.encode(payload, for: .device), as: UTF8.self), false)
    }

    /// Never called: a start does not coalesce.
    func supersedePending(on connection: PostgresConnection, logger: Logger) async throws -> [Int] { [] }

    /// The row fans out from the feed to the audience; with a live channel, iOS 18 devices get the form that names it.
    func address(_ row: inout OutboxRow) throws {
        row.feedID = self.feed.id
        row.audience = self.audience
        row.includesDismissed = self.includesDismissed
        row.channelPayload = nil
        guard let channelID = self.feed.channelID else { return }
        var onChannel = row.content
        onChannel.inputPushToken = false
        onChannel.inputPushChannel = channelID
        row.channelPayload = String(decoding: try OutboxRules.encode(onChannel, for: .device), as: UTF8.self)
    }

    /// The feed's timestamp, content state, stale date and relevance move on, it keeps the start's alert for starts
    /// rebuilt later (a deferred start, a renewal), and it is active.
    func recordAccepted(_ payload: LiveActivityPayload, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE feeds SET last_timestamp = \(payload.timestamp), content_state = \(payload.contentState?.text),
                stale_date = \(payload.staleDate), relevance_score = \(payload.relevanceScore), start_alert = \(payload.alert?.jsonText),
                state = \(unescaped: FeedState.active.sql), updated_at = now()
            WHERE id = \(self.feed.id)
            """,
            logger: logger
        )
    }
}
