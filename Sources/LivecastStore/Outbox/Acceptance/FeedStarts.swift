package import LivecastCore
import Logging
import PostgresNIO

/// Accepting a feed's start for an audience into the outbox. The dispatcher walks the audience's push-to-start
/// tokens: an iOS 18 device starts on the feed's channel (`input-push-channel`), an older one (or any, when the
/// feed has no channel) with `input-push-token: 1`, so it reports an update token. A device is started at most once
/// per feed.
package struct FeedStarts: DatabaseBacked {
    /// Whose push-to-start tokens a start goes to.
    package enum Audience: Sendable, Hashable {
        /// These device ids.
        case devices([String])
        /// The devices of these user ids.
        case users([String])
        /// Every device with a push-to-start token for the feed's attributes type.
        case everyone

        /// The most ids one start may list.
        package static let maximumListed = 10_000

        var kind: String {
            switch self {
            case .devices: "devices"
            case .users: "users"
            case .everyone: "everyone"
            }
        }

        var listed: [String]? {
            switch self {
            case .devices(let ids), .users(let ids): ids
            case .everyone: nil
            }
        }
    }

    /// A start a backend asks for.
    package struct Request: Sendable, Hashable {
        package var appID: Int64
        package var feedKey: String
        package var audience: Audience
        package var contentState: RawJSON
        /// The alert the devices show; ActivityKit requires one to start.
        package var alert: LiveActivityAlert
        /// UNIX seconds; the server's time when `nil`.
        package var timestamp: Int?
        /// Defaults to the timestamp plus the feed's `staleAfterSeconds`, when it has one.
        package var staleDate: Int?
        package var relevanceScore: Double?
        /// 5 or 10; 10 (it carries an alert) when `nil`.
        package var priority: Int?
        package var idempotencyKey: IdempotencyKey?

        package init(appID: Int64, feedKey: String, audience: Audience, contentState: RawJSON, alert: LiveActivityAlert) {
            self.appID = appID
            self.feedKey = feedKey
            self.audience = audience
            self.contentState = contentState
            self.alert = alert
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Checks and stores a start, timed on the database's clock.
    /// - Throws: ``StoreError``: `notFound` feed; `feedEnded`; `staleTimestamp`; `payloadTooLarge`; `invalid` for an
    ///   empty or oversized audience, a bad priority or payload rule. Nothing is written when it throws.
    package func start(_ request: Request) async throws -> AcceptedUpdate {
        if let listed = request.audience.listed {
            guard !listed.isEmpty, listed.count <= Audience.maximumListed, !listed.contains(where: \.isEmpty) else {
                throw StoreError(.invalid, "the audience lists 1 to \(Audience.maximumListed) non-empty ids", field: "audience")
            }
        }
        let priority = try OutboxRules.priority(requested: request.priority, hasAlert: true)
        return try await OutboxRules.transaction(
            self.client,
            logger: self.logger,
            ifCommitLost: LostCommit.keptUpdate(client: self.client, logger: self.logger)
        ) { connection in
            if let replay = try await OutboxRules.replay(
                appID: request.appID,
                idempotencyKey: request.idempotencyKey,
                on: connection,
                logger: self.logger
            ) {
                return replay
            }
            return try await self.start(request, priority: priority, on: connection)
        }
    }

    private func start(_ request: Request, priority: Int, on connection: PostgresConnection) async throws -> AcceptedUpdate {
        let feed = try await FeedTarget.lock(appID: request.appID, feedKey: request.feedKey, on: connection, logger: self.logger)
        let now = try await OutboxRules.databaseNow(on: connection, logger: self.logger)
        let (timestamp, _) = try OutboxRules.timestamp(requested: request.timestamp, last: feed.lastTimestamp, now: now)
        var payload = LiveActivityPayload.start(
            timestamp: timestamp,
            attributesType: feed.attributesType,
            attributes: try RawJSON(validating: feed.attributes),
            contentState: request.contentState,
            alert: request.alert
        )
        payload.staleDate = feed.staleDate(requested: request.staleDate, timestamp: timestamp)
        payload.relevanceScore = request.relevanceScore
        payload.inputPushToken = true
        let tokenForm = String(decoding: try OutboxRules.encode(payload, for: .device), as: UTF8.self)
        var channelForm: String?
        if let channelID = feed.channelID {
            payload.inputPushToken = false
            payload.inputPushChannel = channelID
            channelForm = String(decoding: try OutboxRules.encode(payload, for: .device), as: UTF8.self)
        }
        let sentPriority = try await OutboxRules.budgeted(priority, appID: request.appID, on: connection, logger: self.logger)
        let row = OutboxRow(
            appID: request.appID,
            feedID: feed.id,
            content: payload,
            payload: tokenForm,
            channelPayload: channelForm,
            requestedPriority: priority,
            sentPriority: sentPriority,
            idempotencyKey: request.idempotencyKey,
            coalesced: false,
            audience: request.audience
        )
        let accepted = try await row.insert(dismissalDateClamped: false, on: connection, logger: self.logger)
        try await connection.query(
            """
            UPDATE feeds SET last_timestamp = \(timestamp), content_state = \(request.contentState.text), state = \(unescaped: FeedState.active.sql), updated_at = now()
            WHERE id = \(feed.id)
            """,
            logger: self.logger
        )
        return accepted
    }
}
