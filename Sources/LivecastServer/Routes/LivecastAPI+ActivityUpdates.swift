import Hummingbird
import LivecastCore
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end` (backend): `202` once the update of a
    /// standalone activity is stored in the outbox. With an `Idempotency-Key` header, a retried request gets the
    /// first answer again.
    func addActivityUpdateRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/activities/{activityId}/updates", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, scope) { idempotencyKey, now in
                let body = try await request.decodeJSON(as: UpdateBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: body.staleDate, now: now)
                var update = ActivityUpdates.Request(
                    appID: scope.appID,
                    activityKey: try context.parameters.decoded("activityId"),
                    event: .update,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                update.staleDate = body.staleDate
                update.alert = body.alert?.alert
                update.priority = body.priority
                update.relevanceScore = body.relevanceScore
                update.idempotencyKey = idempotencyKey
                return try await ActivityUpdates(client: self.database, logger: self.logger).accept(update, now: now)
            }
        }
        routes.app(.post, "/v1/apps/{bundleId}/activities/{activityId}/end", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, scope) { idempotencyKey, now in
                let body = try await request.decodeJSON(as: EndBody.self, context: context)
                try Self.checkDates(timestamp: body.timestamp, staleDate: nil, now: now)
                var end = ActivityUpdates.Request(
                    appID: scope.appID,
                    activityKey: try context.parameters.decoded("activityId"),
                    event: .end,
                    contentState: body.contentState,
                    timestamp: body.timestamp
                )
                end.dismissalDate = body.dismissalDate
                end.idempotencyKey = idempotencyKey
                return try await ActivityUpdates(client: self.database, logger: self.logger).accept(end, now: now)
            }
        }
    }
}
