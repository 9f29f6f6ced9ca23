import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `/end` (backend): `202` once the update of a
    /// standalone activity is stored in the outbox. With an `Idempotency-Key` header, a retried request gets the
    /// first answer again.
    func addActivityUpdateRoutes(to routes: RouteRegistrar) {
        self.addUpdateAndEndRoutes(to: routes, target: "/v1/apps/{bundleId}/activities/{activityId}") { content, scope, parameters, now in
            let request = ActivityUpdates.Request(appID: scope.appID, activityKey: try parameters.decoded("activityId"), content: content)
            return try await ActivityUpdates(client: self.database, logger: self.logger).accept(request)
        }
    }
}
