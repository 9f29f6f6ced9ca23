import LivecastCore
import Logging
import PostgresNIO

/// Accepting a feed's updates and its end into the outbox: one row, which the dispatcher fans out to the feed's
/// channel (one broadcast) and to every activity that follows it with its own token.
public struct FeedUpdates: Sendable {
    /// An update or end a backend asks for. Without a `staleDate`, an update gets the timestamp plus the feed's
    /// `staleAfterSeconds`, when it has one.
    public struct Request: Sendable, Hashable {
        public var appID: Int64
        public var feedKey: String
        public var content: UpdateContent

        public init(appID: Int64, feedKey: String, content: UpdateContent) {
            self.appID = appID
            self.feedKey = feedKey
            self.content = content
        }

        public init(appID: Int64, feedKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
            self.init(appID: appID, feedKey: feedKey, content: UpdateContent(event: event, contentState: contentState, timestamp: timestamp))
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
        guard request.content.event != .start else { throw StoreError(.invalid, "start a feed with FeedStarts", field: "event") }
        let priority = try OutboxRules.priority(requested: request.content.priority, hasAlert: request.content.alert != nil)
        return try await OutboxRules.transaction(self.client, logger: self.logger) { connection in
            let idempotencyKey = request.content.idempotencyKey
            if let replay = try await OutboxRules.replay(appID: request.appID, idempotencyKey: idempotencyKey, on: connection, logger: self.logger) {
                return replay
            }
            return try await self.accept(request, priority: priority, now: now, on: connection)
        }
    }

    private func accept(_ request: Request, priority: Int, now: Int, on connection: PostgresConnection) async throws -> AcceptedUpdate {
        let feed = try await FeedTarget.lock(appID: request.appID, feedKey: request.feedKey, on: connection, logger: self.logger)
        let content = request.content
        let isEnd = content.event == .end
        let (timestamp, coalesced) = try OutboxRules.timestamp(requested: content.timestamp, last: feed.lastTimestamp, now: now)
        let contentState = try content.contentState ?? (isEnd ? feed.contentState.map { try RawJSON(validating: $0) } : nil)
        let staleDate = isEnd ? content.staleDate : feed.staleDate(requested: content.staleDate, timestamp: timestamp)
        let (payload, clamped) = content.payload(timestamp: timestamp, contentState: contentState, staleDate: staleDate)
        let destination: PushDestination = feed.hasTokenFollowers || feed.channelID == nil ? .device : .broadcast
        let bytes = String(decoding: try OutboxRules.encode(payload, for: destination), as: UTF8.self)
        let sentPriority = try await OutboxRules.budgeted(priority, appID: request.appID, on: connection, logger: self.logger)
        if coalesced { try await feed.supersedeUnstarted(on: connection, logger: self.logger) }
        let row = OutboxRow(
            appID: request.appID,
            feedID: feed.id,
            content: payload,
            payload: bytes,
            channelPayload: feed.channelID == nil ? nil : bytes,
            requestedPriority: priority,
            sentPriority: sentPriority,
            idempotencyKey: content.idempotencyKey,
            coalesced: coalesced
        )
        let accepted = try await row.insert(dismissalDateClamped: clamped, on: connection, logger: self.logger)
        try await connection.query(
            """
            UPDATE feeds SET last_timestamp = \(timestamp), content_state = coalesce(\(contentState?.text), content_state),
                state = CASE WHEN \(isEnd) THEN 'ended' ELSE 'active' END,
                ended_at = CASE WHEN \(isEnd) THEN now() END, updated_at = now()
            WHERE id = \(feed.id)
            """,
            logger: self.logger
        )
        return accepted
    }
}
