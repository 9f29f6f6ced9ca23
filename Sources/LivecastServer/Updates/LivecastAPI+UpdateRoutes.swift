import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`, `/updates` and `/end` (backend): `202` once stored in the
    /// outbox; the dispatcher fans it out to the feed's channel and token-based followers (a start: to the
    /// audience's push-to-start tokens). With an `Idempotency-Key` header, a retried request (same route, target and body) gets the first answer.
    func addFeedUpdateRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/feeds/{feedKey}/start", role: .backend) { request, context, scope in
            try await self.acceptOnce(request, context, scope, route: .feedStart)
        }
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/feeds/{feedKey}", update: .feedUpdate, end: .feedEnd)
    }

    /// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end` (backend): `202` once the update of a
    /// standalone activity is stored in the outbox. With an `Idempotency-Key` header, a retried request gets the
    /// first answer again.
    func addActivityUpdateRoutes(to routes: RouteRegistrar) {
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/activities/{activityId}", update: .activityUpdate, end: .activityEnd)
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
}
