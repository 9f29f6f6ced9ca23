import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `GET /v1/apps/{bundleId}/updates/{updateId}` (backend): where an accepted update stands.
    func addUpdateStatusRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/updates/{updateId}", role: .backend) { _, context, scope in
            let updateID = try context.parameters.id("updateId")
            guard let status = try await UpdateStatus.read(updateID: updateID, appID: scope.appID, client: self.database, logger: self.logger) else {
                throw APIError.notFound("no update \(updateID)", field: "updateId")
            }
            return try .json(UpdateStatusBody(status))
        }
    }
}
