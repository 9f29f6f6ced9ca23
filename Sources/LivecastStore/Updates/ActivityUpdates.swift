import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Accepting updates and ends for one standalone activity into the outbox, with the ordering and lifecycle
/// rules (docs/ARCHITECTURE.md, invariants 1 and 2) checked in the same transaction that stores the update.
public struct ActivityUpdates: Sendable {
    /// An update or end a backend asks for.
    public struct Request: Sendable, Hashable {
        public var appID: Int64
        public var activityKey: String
        public var content: UpdateContent

        public init(appID: Int64, activityKey: String, content: UpdateContent) {
            self.appID = appID
            self.activityKey = activityKey
            self.content = content
        }

        public init(appID: Int64, activityKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
            self.init(appID: appID, activityKey: activityKey, content: UpdateContent(event: event, contentState: contentState, timestamp: timestamp))
        }
    }

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Checks and stores an update or end.
    /// - Parameter now: The server's time, in UNIX seconds.
    /// - Throws: ``StoreError``: `notFound` activity; `activityEnded`; `channelRetired` for a channel-based activity
    ///   whose channel is retired; `staleTimestamp` for a timestamp older than the last accepted; `payloadTooLarge`
    ///   with the measured size; `invalid` for a start, a bad priority or payload rule (naming the field). Nothing is
    ///   written when it throws.
    public func accept(_ request: Request, now: Int) async throws -> AcceptedUpdate {
        guard request.content.event != .start else {
            throw StoreError(.invalid, "an activity's own update token cannot start it", field: "event")
        }
        let priority = try OutboxRules.priority(requested: request.content.priority, hasAlert: request.content.alert != nil)
        return try await OutboxRules.transaction(self.client, logger: self.logger) { connection in
            let idempotencyKey = request.content.idempotencyKey
            if let replay = try await OutboxRules.replay(appID: request.appID, idempotencyKey: idempotencyKey, on: connection, logger: self.logger) {
                return replay
            }
            return try await self.accept(request, priority: priority, now: now, asFollower: false, on: connection)
        }
    }

    /// Ends one token-based activity that follows a feed, on its own token and with the feed's content state, while
    /// the feed goes on for the others (the reaper ends followers nearing ActivityKit's 8-hour limit this way). Its
    /// timestamp comes after both the feed's and the activity's last, so it is the last push the device applies.
    /// - Parameters:
    ///   - dismissalDate: UNIX seconds; at most 4 hours after the end (clamped).
    ///   - now: The server's time, in UNIX seconds.
    /// - Throws: ``StoreError``: `notFound` activity; `activityEnded` when it, or its feed, has ended (the feed's end
    ///   reaches it); `conflict` for a standalone or channel-based activity (a broadcast would end every follower).
    public func endFollower(appID: Int64, activityKey: String, dismissalDate: Int?, now: Int) async throws -> AcceptedUpdate {
        var request = Request(appID: appID, activityKey: activityKey, event: .end)
        request.content.dismissalDate = dismissalDate
        return try await OutboxRules.transaction(self.client, logger: self.logger) { connection in
            try await self.accept(request, priority: 5, now: now, asFollower: true, on: connection)
        }
    }

    private func accept(_ request: Request, priority: Int, now: Int, asFollower: Bool, on connection: PostgresConnection) async throws -> AcceptedUpdate {
        let rows = try await connection.query(
            """
            SELECT a.id, a.state, a.last_timestamp, c.state, a.feed_id FROM activities a LEFT JOIN channels c ON c.id = a.channel_id
            WHERE a.app_id = \(request.appID) AND a.activity_key = \(request.activityKey) FOR UPDATE OF a
            """,
            logger: self.logger
        )
        var found: (id: Int64, state: String, lastTimestamp: Int?, channelState: String?, feedID: Int64?)?
        for try await row in rows.decode((Int64, String, Int?, String?, Int64?).self) { found = row }
        guard let activity = found else { throw StoreError(.notFound, "no activity \(request.activityKey)", field: "activityId") }
        // Its feed's updates carry the feed's timestamps; updates of its own would interleave with them.
        guard (activity.feedID != nil) == asFollower else {
            throw StoreError(
                .conflict,
                asFollower ? "the activity follows no feed" : "the activity follows a feed: update the feed instead",
                field: "activityId"
            )
        }
        guard activity.state == "active" || activity.state == "starting" else {
            throw StoreError(.activityEnded, "the activity has ended", field: "activityId")
        }
        // A follower's feed is read FOR SHARE: a feed end accepted meanwhile is seen, one accepted later waits.
        var feed: (state: String, lastTimestamp: Int?, contentState: String?)?
        if let feedID = activity.feedID {
            let feeds = try await connection.query(
                "SELECT state, last_timestamp, content_state FROM feeds WHERE id = \(feedID) FOR SHARE",
                logger: self.logger
            )
            for try await row in feeds.decode((String, Int?, String?).self) { feed = row }
            guard feed?.state != "ended" else { throw StoreError(.activityEnded, "the activity's feed has ended", field: "activityId") }
        }
        if asFollower, activity.channelState != nil {
            throw StoreError(.conflict, "a channel-based follower cannot be ended alone: a broadcast ends every follower", field: "activityId")
        }
        if let channelState = activity.channelState, channelState != "active" {
            throw StoreError(.channelRetired, "the activity's channel is \(channelState): nothing can reach it", field: "activityId")
        }
        let last = [activity.lastTimestamp, feed?.lastTimestamp].compactMap { $0 }.max()
        let content = request.content
        let (timestamp, coalesced) = try OutboxRules.timestamp(requested: content.timestamp, last: last, now: now)
        let contentState = try content.contentState ?? feed?.contentState.map { try RawJSON(validating: $0) }
        let (payload, clamped) = content.payload(timestamp: timestamp, contentState: contentState, staleDate: content.staleDate)
        let bytes = try OutboxRules.encode(payload, for: activity.channelState == nil ? .device : .broadcast)
        let sentPriority = try await OutboxRules.budgeted(priority, appID: request.appID, on: connection, logger: self.logger)
        if coalesced {
            try await connection.query(
                "UPDATE updates SET status = 'superseded', completed_at = now() WHERE activity_id = \(activity.id) AND status = 'pending'",
                logger: self.logger
            )
        }
        let row = OutboxRow(
            appID: request.appID,
            activityID: activity.id,
            content: payload,
            payload: String(decoding: bytes, as: UTF8.self),
            requestedPriority: priority,
            sentPriority: sentPriority,
            idempotencyKey: content.idempotencyKey,
            coalesced: coalesced
        )
        let accepted = try await row.insert(dismissalDateClamped: clamped, on: connection, logger: self.logger)
        if content.event == .end {
            try await connection.query(
                "UPDATE activities SET last_timestamp = \(timestamp), state = 'ended', ended_at = now(), dismissal_date = \(payload.dismissalDate) WHERE id = \(activity.id)",
                logger: self.logger
            )
        } else {
            try await connection.query(
                "UPDATE activities SET last_timestamp = \(timestamp), stale_date = coalesce(\(payload.staleDate), stale_date) WHERE id = \(activity.id)",
                logger: self.logger
            )
        }
        return accepted
    }
}
