import Hummingbird
import LivecastCore
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`, `/updates` and `/end` (backend): `202` once stored in the
    /// outbox; the dispatcher fans it out to the feed's channel and token-based followers (a start: to the
    /// audience's push-to-start tokens). With an `Idempotency-Key` header, a retried request gets the first answer.
    func addFeedUpdateRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/start", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, scope) { idempotencyKey, now in
                let body = try await request.decodeJSON(as: FeedStartBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
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
                return try await FeedStarts(client: self.database, logger: self.logger).start(start, now: now)
            }
        }
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/updates", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, scope) { idempotencyKey, now in
                let body = try await request.decodeJSON(as: UpdateBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
                var update = FeedUpdates.Request(
                    appID: scope.appID,
                    feedKey: try context.parameters.decoded("feedKey"),
                    event: .update,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                update.staleDate = body.staleDate
                update.alert = body.alert?.alert
                update.priority = body.priority
                update.relevanceScore = body.relevanceScore
                update.idempotencyKey = idempotencyKey
                return try await FeedUpdates(client: self.database, logger: self.logger).accept(update, now: now)
            }
        }
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/end", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, scope) { idempotencyKey, now in
                let body = try await request.decodeJSON(as: EndBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: nil, now: now)
                var end = FeedUpdates.Request(
                    appID: scope.appID,
                    feedKey: try context.parameters.decoded("feedKey"),
                    event: .end,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                end.dismissalDate = body.dismissalDate
                end.idempotencyKey = idempotencyKey
                return try await FeedUpdates(client: self.database, logger: self.logger).accept(end, now: now)
            }
        }
    }
}
