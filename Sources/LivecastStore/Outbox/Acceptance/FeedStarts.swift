package import LivecastCore

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
        /// Whether devices whose user dismissed an activity of the feed are started again; by default they are left
        /// out, as are devices that already run one.
        package var includesDismissed = false

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

    /// Checks and stores a start, timed on the database's clock, by the rules every update follows
    /// (``UpdateAcceptance``): it is never coalesced, and its target is the feed with the audience
    /// (``FeedStartTarget``).
    /// - Throws: ``StoreError``: `notFound` feed; `feedEnded`; `staleTimestamp`; `payloadTooLarge`; `invalid` for an
    ///   empty or oversized audience, a bad priority or payload rule. Nothing is written when it throws.
    package func start(_ request: Request) async throws -> AcceptedUpdate {
        if let listed = request.audience.listed {
            guard !listed.isEmpty, listed.count <= Audience.maximumListed, !listed.contains(where: \.isEmpty) else {
                throw StoreError(.invalid, "the audience lists 1 to \(Audience.maximumListed) non-empty ids", field: "audience")
            }
        }
        var content = UpdateContent(event: .start, contentState: request.contentState, timestamp: request.timestamp)
        content.staleDate = request.staleDate
        content.alert = request.alert
        content.relevanceScore = request.relevanceScore
        content.priority = request.priority
        content.idempotencyKey = request.idempotencyKey
        let start = UpdateRequest<FeedStarts>(appID: request.appID, targetKey: request.feedKey, content: content)
        return try await UpdateAcceptance.accept(start, client: self.client, logger: self.logger) { [logger] connection in
            let feed = try await FeedTarget.lock(appID: request.appID, feedKey: request.feedKey, on: connection, logger: logger)
            return FeedStartTarget(feed: feed, audience: request.audience, includesDismissed: request.includesDismissed)
        }
    }
}
