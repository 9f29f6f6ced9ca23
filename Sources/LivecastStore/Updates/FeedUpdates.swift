import LivecastCore
import Logging
import PostgresNIO

/// Accepting a feed's updates and its end into the outbox: one row, which the dispatcher fans out to the feed's
/// channel (one broadcast) and to every activity that follows it with its own token.
public struct FeedUpdates: Sendable {
    /// An update or end a backend asks for.
    public struct Request: Sendable, Hashable {
        public var appID: Int64
        public var feedKey: String
        /// `.update` or `.end`.
        public var event: LiveActivityEvent
        /// Required for an update; an end without one keeps the feed's last content state.
        public var contentState: RawJSON?
        /// UNIX seconds; the server's time when `nil`.
        public var timestamp: Int?
        /// Defaults to the timestamp plus the feed's `staleAfterSeconds`, when it has one.
        public var staleDate: Int?
        /// Only on an end; at most 4 hours after it.
        public var dismissalDate: Int?
        public var alert: LiveActivityAlert?
        public var relevanceScore: Double?
        /// 5 or 10; 10 when an alert is given, else 5, when `nil`.
        public var priority: Int?
        public var idempotencyKey: String?

        public init(appID: Int64, feedKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
            self.appID = appID
            self.feedKey = feedKey
            self.event = event
            self.contentState = contentState
            self.timestamp = timestamp
        }
    }

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Checks and stores an update or end of a feed.
    /// - Parameter now: The server's time, in UNIX seconds.
    /// - Throws: ``StoreError``: `notFound` feed; `feedEnded`; `staleTimestamp`; `payloadTooLarge` with the measured
    ///   size (4,096 bytes while activities follow by token, else 5,120 for the channel); `invalid` for a start, a bad
    ///   priority or payload rule. Nothing is written when it throws.
    public func accept(_ request: Request, now: Int) async throws -> AcceptedUpdate {
        guard request.event != .start else { throw StoreError(.invalid, "start a feed with FeedStarts", field: "event") }
        let priority = try OutboxRules.priority(requested: request.priority, hasAlert: request.alert != nil)
        return try await OutboxRules.transaction(self.client, logger: self.logger) { connection in
            if let replay = try await OutboxRules.replay(appID: request.appID, idempotencyKey: request.idempotencyKey, on: connection, logger: self.logger) {
                return replay
            }
            return try await self.accept(request, priority: priority, now: now, on: connection)
        }
    }

    private func accept(_ request: Request, priority: Int, now: Int, on connection: PostgresConnection) async throws -> AcceptedUpdate {
        let feed = try await FeedTarget.lock(appID: request.appID, feedKey: request.feedKey, on: connection, logger: self.logger)
        let (timestamp, coalesced) = try OutboxRules.timestamp(requested: request.timestamp, last: feed.lastTimestamp, now: now)
        let contentState = try request.contentState ?? (request.event == .end ? feed.contentState.map { try RawJSON(validating: $0) } : nil)
        var payload = LiveActivityPayload(event: request.event, timestamp: timestamp, contentState: contentState)
        payload.alert = request.alert
        payload.relevanceScore = request.relevanceScore
        var clamped = false
        if request.event == .end {
            payload.staleDate = request.staleDate
            (payload.dismissalDate, clamped) = OutboxRules.dismissalDate(requested: request.dismissalDate, timestamp: timestamp)
        } else {
            payload.staleDate = feed.staleDate(requested: request.staleDate, timestamp: timestamp)
            payload.dismissalDate = request.dismissalDate
        }
        let destination: PushDestination = feed.hasTokenFollowers || feed.channelID == nil ? .device : .broadcast
        let bytes = String(decoding: try OutboxRules.encode(payload, for: destination), as: UTF8.self)
        let sentPriority = try await OutboxRules.budgeted(priority, appID: request.appID, on: connection, logger: self.logger)
        if coalesced { try await feed.supersedeUnstarted(on: connection, logger: self.logger) }
        let inserted = try await connection.query(
            """
            INSERT INTO updates (app_id, feed_id, event, timestamp, content_state, stale_date, dismissal_date, relevance_score,
                                 priority, priority_downgraded, idempotency_key, not_before, payload, channel_payload)
            VALUES (\(request.appID), \(feed.id), \(request.event.rawValue), \(timestamp), \(contentState?.text),
                    \(payload.staleDate), \(payload.dismissalDate), \(payload.relevanceScore), \(Int16(sentPriority)),
                    \(sentPriority != priority), \(request.idempotencyKey),
                    CASE WHEN \(coalesced) THEN to_timestamp(\(Double(timestamp))) ELSE now() END, \(bytes),
                    \(feed.channelID == nil ? nil : bytes))
            RETURNING id
            """,
            logger: self.logger
        )
        var updateID: Int64 = 0
        for try await id in inserted.decode(Int64.self) { updateID = id }
        try await connection.query(
            """
            UPDATE feeds SET last_timestamp = \(timestamp), content_state = coalesce(\(contentState?.text), content_state),
                state = CASE WHEN \(request.event == .end) THEN 'ended' ELSE 'active' END,
                ended_at = CASE WHEN \(request.event == .end) THEN now() END, updated_at = now()
            WHERE id = \(feed.id)
            """,
            logger: self.logger
        )
        try await OutboxRules.notifyDispatchers(on: connection, logger: self.logger)
        return AcceptedUpdate(
            updateID: updateID,
            timestamp: timestamp,
            priority: sentPriority,
            priorityDowngraded: sentPriority != priority,
            coalesced: coalesced,
            dismissalDateClamped: clamped,
            isReplay: false
        )
    }
}
