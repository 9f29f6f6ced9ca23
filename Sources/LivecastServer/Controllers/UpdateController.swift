import Hummingbird
import LivecastStore
import Logging

/// Starts, updates and ends (backend), `202` once stored in the outbox; with an `Idempotency-Key` header, a retried
/// request (same route, target and body) gets the first answer:
/// - `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`, `/updates` and `/end`: the dispatcher fans it out to the feed's
///   channel and token-based followers (a start: to the audience's push-to-start tokens);
/// - `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end`: a standalone activity's.
///
/// And where one stands: `GET /v1/apps/{bundleId}/updates/{updateId}`; `DELETE` cancels a scheduled one that has not
/// been sent.
struct UpdateController: APIController {
    let records: Records
    let intake: UpdateIntake
    /// The answers kept for requests with an idempotency key.
    let responses: UpdateResponses

    /// The furthest ahead a start, update or end may be scheduled: 7 days.
    static let maximumScheduleAhead = 7 * 86400

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/start", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope, route: .feedStart)
        }
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/feeds/{feedKey}", update: .feedUpdate, end: .feedEnd)
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/activities/{activityId}", update: .activityUpdate, end: .activityEnd)
        routes.app(.get, "/v1/apps/{bundleId}/updates/{updateId}", role: .backend) { _, context, scope in
            try await self.status(of: try context.parameters.id("updateId"), scope, logger: context.logger)
        }
        routes.app(.delete, "/v1/apps/{bundleId}/updates/{updateId}", role: .backend) { _, context, scope in
            try await self.cancel(try context.parameters.id("updateId"), scope, logger: context.logger)
        }
    }

    /// Adds `POST {target}/updates` and `POST {target}/end` (backend) for a kind of target.
    private func addUpdateAndEndRoutes(to routes: RouteRegistrar, target: String, update: UpdateRoute, end: UpdateRoute) {
        routes.app(.post, "\(target)/updates", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope, route: update)
        }
        routes.app(.post, "\(target)/end", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope, route: end)
        }
    }

    /// Where an accepted or scheduled update stands.
    private func status(of updateID: Int64, _ scope: AppScope, logger: Logger) async throws -> any ResponseGenerator {
        let records = self.records.logging(to: logger)
        if let status = try await records.update(updateID, appID: scope.appID) {
            return status
        }
        guard let scheduled = try await self.intake.scheduled.logging(to: logger).status(id: updateID, appID: scope.appID) else {
            throw APIError.notFound("no update \(updateID)", field: "updateId")
        }
        // Once sent, a scheduled update is the outbox row it became.
        if let sentAs = scheduled.updateID,
            let status = try await records.update(sentAs, appID: scope.appID)
        {
            return status
        }
        return scheduled
    }

    /// Cancels a scheduled update that has not been sent.
    private func cancel(_ updateID: Int64, _ scope: AppScope, logger: Logger) async throws -> ScheduledUpdates.Status {
        let records = self.records.logging(to: logger)
        guard let scheduled = try await self.intake.scheduled.logging(to: logger).cancel(id: updateID, appID: scope.appID) else {
            if try await records.update(updateID, appID: scope.appID) != nil {
                throw APIError(.conflict, code: "conflict", "update \(updateID) is in the outbox and cannot be cancelled; a newer update replaces it")
            }
            throw APIError.notFound("no update \(updateID)", field: "updateId")
        }
        guard scheduled.status == .cancelled else {
            throw APIError(.conflict, code: "conflict", "update \(updateID) was \(scheduled.status.rawValue) at its sendAt and cannot be cancelled")
        }
        return scheduled
    }
}
