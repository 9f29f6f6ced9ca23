import Hummingbird
import LivecastCore
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
}
