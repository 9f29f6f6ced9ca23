import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end` (backend): `202` once the update of a
    /// standalone activity is stored in the outbox. With an `Idempotency-Key` header, a retried request gets the
    /// first answer again.
    func addActivityUpdateRoutes(to routes: RouteRegistrar) {
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/activities/{activityId}", update: .activityUpdate, end: .activityEnd)
    }
}
