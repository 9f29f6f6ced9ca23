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

/// A start, update or end, decoded and checked, ready for the outbox.
enum PreparedUpdate {
    case feedStart(FeedStarts.Request)
    case feedContent(FeedUpdates.Request)
    case activityContent(ActivityUpdates.Request)
}

extension LivecastAPI {
    /// The body's `sendAt`, once the body decodes as its route's.
    /// - Throws: ``APIError`` 400 when it does not.
    static func sendAt(of route: UpdateRoute, body: [UInt8]) throws -> Int? {
        switch route {
        case .feedStart: try Request.decodeJSON(as: FeedStartBody.self, from: body).sendAt
        case .feedUpdate, .activityUpdate: try Request.decodeJSON(as: UpdateBody.self, from: body).sendAt
        case .feedEnd, .activityEnd: try Request.decodeJSON(as: EndBody.self, from: body).sendAt
        }
    }

    /// Decodes a start, update or end and checks its dates as of `now` (UNIX seconds): the time it is posted, or
    /// its `sendAt` when it is scheduled.
    /// - Throws: ``APIError`` naming the field at fault.
    func prepare(
        _ route: UpdateRoute,
        target: String,
        body: [UInt8],
        appID: Int64,
        idempotencyKey: IdempotencyKey?,
        now: Int
    ) throws
        -> PreparedUpdate
    {
        switch route {
        case .feedStart:
            let body = try Request.decodeJSON(as: FeedStartBody.self, from: body)
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
        case .feedUpdate, .feedEnd, .activityUpdate, .activityEnd:
            var content =
                route == .feedEnd || route == .activityEnd
                ? try Request.decodeJSON(as: EndBody.self, from: body).content(now: now)
                : try Request.decodeJSON(as: UpdateBody.self, from: body).content(now: now)
            try self.checkClockSkew(content.timestamp, now: now)
            content.idempotencyKey = idempotencyKey
            return route == .activityUpdate || route == .activityEnd
                ? .activityContent(ActivityUpdates.Request(appID: appID, activityKey: target, content: content))
                : .feedContent(FeedUpdates.Request(appID: appID, feedKey: target, content: content))
        }
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
