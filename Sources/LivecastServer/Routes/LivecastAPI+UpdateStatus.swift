import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `GET /v1/apps/{bundleId}/updates/{updateId}` (backend): where an accepted or scheduled update stands;
    /// `DELETE` (backend): cancels a scheduled one that has not been sent.
    func addUpdateStatusRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/updates/{updateId}", role: .backend) { _, context, scope in
            let updateID = try context.parameters.id("updateId")
            if let status = try await UpdateStatus.read(updateID: updateID, appID: scope.appID, client: self.database, logger: self.logger) {
                return try .json(status)
            }
            guard let scheduled = try await ScheduledUpdates(client: self.database, logger: self.logger).status(id: updateID, appID: scope.appID)
            else {
                throw APIError.notFound("no update \(updateID)", field: "updateId")
            }
            // Once sent, a scheduled update is the outbox row it became.
            if let sentAs = scheduled.updateID,
                let status = try await UpdateStatus.read(updateID: sentAs, appID: scope.appID, client: self.database, logger: self.logger)
            {
                return try .json(status)
            }
            return try .json(scheduled)
        }
        routes.app(.delete, "/v1/apps/{bundleId}/updates/{updateId}", role: .backend) { _, context, scope in
            let updateID = try context.parameters.id("updateId")
            guard let scheduled = try await ScheduledUpdates(client: self.database, logger: self.logger).cancel(id: updateID, appID: scope.appID)
            else {
                if try await UpdateStatus.read(updateID: updateID, appID: scope.appID, client: self.database, logger: self.logger) != nil {
                    throw APIError(
                        .conflict,
                        code: "conflict",
                        "update \(updateID) is in the outbox and cannot be cancelled; a newer update replaces it"
                    )
                }
                throw APIError.notFound("no update \(updateID)", field: "updateId")
            }
            guard scheduled.status == .cancelled else {
                throw APIError(
                    .conflict,
                    code: "conflict",
                    "update \(updateID) was \(scheduled.status.rawValue) at its sendAt and cannot be cancelled"
                )
            }
            return try .json(scheduled)
        }
    }
}
