import Hummingbird
import LivecastCore
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`, `/updates` and `/end` (backend): `202` once stored in the
    /// outbox; the dispatcher fans it out to the feed's channel and token-based followers (a start: to the
    /// audience's push-to-start tokens). With an `Idempotency-Key` header, a retried request (same route, target and body) gets the first answer.
    func addFeedUpdateRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/start", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope) { request, idempotencyKey, now in
                let body = try await request.decodeJSON(as: FeedStartBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
                try self.checkClockSkew(body.timestamp, now: now)
                try InputLimits.checkDateWindow(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
                var start = FeedStarts.Request(
                    appID: scope.appID,
                    feedKey: try context.parameters.decoded("feedKey"),
                    audience: try body.audience.audience(),
                    contentState: body.contentState,
                    alert: body.alert.alert
                )
                start.timestamp = body.timestamp
                start.staleDate = body.staleDate
                start.relevanceScore = body.relevanceScore
                start.priority = body.priority
                start.idempotencyKey = idempotencyKey
                return try await FeedStarts(client: self.database, logger: self.logger).start(start)
            }
        }
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/feeds/{feedKey}") { content, scope, parameters, now in
            let request = FeedUpdates.Request(appID: scope.appID, feedKey: try parameters.decoded("feedKey"), content: content)
            return try await FeedUpdates(client: self.database, logger: self.logger).accept(request)
        }
    }
}
