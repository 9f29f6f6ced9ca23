import LivecastStore
import Logging

/// A start, update or end, decoded and checked, ready for the outbox.
enum PreparedUpdate {
    case feedStart(FeedStarts.Request)
    case feedContent(FeedUpdates.Request)
    case activityContent(ActivityUpdates.Request)
}

/// Checks starts, updates and ends and stores them in the outbox: the routes as a request is posted
/// (``UpdateController``), the scheduled sends as its `sendAt` comes (``ScheduledSendsService``).
struct UpdateIntake: Sendable {
    /// The server's date rules, with the configured clock skew.
    let dateChecks: DateChecks
    let feedStarts: FeedStarts
    let feedUpdates: FeedUpdates
    /// Accepts concurrent updates and ends of standalone activities together.
    let activityUpdates: ActivityUpdateQueue
    /// The requests kept until their `sendAt`.
    let scheduled: ScheduledUpdates

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
        try self.dateChecks.check(body.dates, now: now)
        var content: UpdateContent
        switch body {
        case .start(let body):
            var start = try body.request(appID: appID, feedKey: target)
            start.idempotencyKey = idempotencyKey
            return .feedStart(start)
        case .update(let body): content = body.content
        case .end(let body): content = body.content
        }
        content.idempotencyKey = idempotencyKey
        return route == .activityUpdate || route == .activityEnd
            ? .activityContent(ActivityUpdates.Request(appID: appID, targetKey: target, content: content))
            : .feedContent(FeedUpdates.Request(appID: appID, targetKey: target, content: content))
    }

    /// Stores a prepared start, update or end in the outbox, logging to `logger` (an activity's update is stored with
    /// others, under the queue's logger).
    func store(_ prepared: PreparedUpdate, logger: Logger) async throws -> AcceptedUpdate {
        switch prepared {
        case .feedStart(let start): try await self.feedStarts.logging(to: logger).start(start)
        case .feedContent(let request): try await self.feedUpdates.logging(to: logger).accept(request)
        case .activityContent(let request): try await self.activityUpdates.accept(request)
        }
    }
}
