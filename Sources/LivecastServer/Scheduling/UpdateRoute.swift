import Hummingbird
import LivecastStore

/// What a start, update or end is posted to: its kind and its target's kind. A scheduled request keeps it, to go
/// through the same checks and store when its time comes.
enum UpdateRoute: String, Sendable, CaseIterable {
    case feedStart, feedUpdate, feedEnd, activityUpdate, activityEnd

    /// The path parameter that names the target.
    var targetParameter: String {
        switch self {
        case .feedStart, .feedUpdate, .feedEnd: "feedKey"
        case .activityUpdate, .activityEnd: "activityId"
        }
    }
}

/// A start, update or end's body, decoded as its route's: once a request, for its `sendAt` and its checks alike.
enum UpdateRequestBody {
    case start(FeedStartBody)
    case update(UpdateBody)
    case end(EndBody)

    /// Decodes `body` as `route`'s.
    /// - Throws: ``APIError`` 400 when it does not decode.
    init(_ route: UpdateRoute, body: [UInt8]) throws {
        switch route {
        case .feedStart: self = .start(try Request.decodeJSON(as: FeedStartBody.self, from: body))
        case .feedUpdate, .activityUpdate: self = .update(try Request.decodeJSON(as: UpdateBody.self, from: body))
        case .feedEnd, .activityEnd: self = .end(try Request.decodeJSON(as: EndBody.self, from: body))
        }
    }

    /// When the request is to be sent, if it is scheduled.
    var sendAt: Int? {
        switch self {
        case .start(let body): body.sendAt
        case .update(let body): body.sendAt
        case .end(let body): body.sendAt
        }
    }
}

/// A start, update or end, decoded and checked, ready for the outbox.
enum PreparedUpdate {
    case feedStart(FeedStarts.Request)
    case feedContent(FeedUpdates.Request)
    case activityContent(ActivityUpdates.Request)
}

extension LivecastAPI {
    /// Checks a start, update or end's dates as of `now` (UNIX seconds), the time it is posted or its `sendAt` when
    /// it is scheduled, and makes it ready for the outbox.
    /// - Parameter body: The body, decoded as `route`'s.
    /// - Throws: ``APIError`` naming the field at fault.
    func prepare(
        _ route: UpdateRoute,
        target: String,
        body: UpdateRequestBody,
        appID: Int64,
        idempotencyKey: IdempotencyKey?,
        now: Int
    ) throws
        -> PreparedUpdate
    {
        var content: UpdateContent
        switch body {
        case .start(let body):
            try Self.checkDates(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
            try self.checkClockSkew(body.timestamp, now: now)
            try InputLimits.checkDateWindow(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
            var start = FeedStarts.Request(
                appID: appID,
                feedKey: target,
                audience: try body.audience.audience(),
                contentState: body.contentState,
                alert: body.alert.alert
            )
            start.timestamp = body.timestamp
            start.staleDate = body.staleDate
            start.relevanceScore = body.relevanceScore
            start.priority = body.priority
            start.idempotencyKey = idempotencyKey
            return .feedStart(start)
        case .update(let body): content = try body.content(now: now)
        case .end(let body): content = try body.content(now: now)
        }
        try self.checkClockSkew(content.timestamp, now: now)
        content.idempotencyKey = idempotencyKey
        return route == .activityUpdate || route == .activityEnd
            ? .activityContent(ActivityUpdates.Request(appID: appID, activityKey: target, content: content))
            : .feedContent(FeedUpdates.Request(appID: appID, feedKey: target, content: content))
    }

    /// Stores a prepared start, update or end in the outbox.
    func store(_ prepared: PreparedUpdate) async throws -> AcceptedUpdate {
        switch prepared {
        case .feedStart(let start): try await FeedStarts(client: self.database, logger: self.logger).start(start)
        case .feedContent(let request): try await FeedUpdates(client: self.database, logger: self.logger).accept(request)
        case .activityContent(let request): try await self.activityUpdates.accept(request)
        }
    }
}
