import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// The reads an operator needs: `GET /v1/apps/{bundleId}/feeds` and `…/feeds/{feedKey}/updates` (operator),
    /// paged; `GET …/push-to-start-tokens/{deviceId}` (backend).
    func addReadRoutes(to routes: RouteRegistrar) {
        routes.app(.get, "/v1/apps/{bundleId}/feeds", role: .operator) { request, _, scope in
            let parameters = request.uri.queryParameters
            let limit = try Self.pageLimit(parameters)
            var after: String?
            if let value = parameters.get("after") {
                try InputLimits.checkRequiredIdentifier(value, field: "after")
                after = value
            }
            let feeds = try await Feeds(client: self.database, logger: self.logger).list(
                appID: scope.appID,
                after: after,
                limit: limit + 1,
                registrationTimeout: self.configuration.startRegistrationTimeout
            )
            return try .json(Self.page("feeds", feeds, limit: limit) { $0.feedKey })
        }
        routes.app(.get, "/v1/apps/{bundleId}/feeds/{feedKey}/updates", role: .operator) { request, context, scope in
            let feedKey = try context.parameters.decoded("feedKey")
            let parameters = request.uri.queryParameters
            let limit = try Self.pageLimit(parameters)
            let before = try Self.integer(parameters, "before", in: 1...Int64.max)
            guard
                let updates = try await UpdateStatus.history(
                    feedKey: feedKey,
                    appID: scope.appID,
                    before: before,
                    limit: limit + 1,
                    client: self.database,
                    logger: self.logger
                )
            else {
                throw APIError.notFound("no feed \(feedKey)", field: "feedKey")
            }
            return try .json(Self.page("updates", updates, limit: limit) { $0.updateID })
        }
        routes.app(.get, "/v1/apps/{bundleId}/push-to-start-tokens/{deviceId}", role: .backend) { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            guard let device = try await DeviceTokens.read(appID: scope.appID, deviceID: deviceID, client: self.database, logger: self.logger) else {
                throw APIError.notFound("no push-to-start token of device \(deviceID)", field: "deviceId")
            }
            return try .json(device)
        }
    }
}
