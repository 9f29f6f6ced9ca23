import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// `PUT` and `DELETE /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}` (backend).
    func addPushToStartTokenRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}"
        routes.app(.put, path, role: .backend) { request, context, scope in
            let body = try await request.decodeJSON(as: PushToStartTokenBody.self, context: context)
            let result = try await self.pushToStartRegistrar.register(
                body.registration(
                    appID: scope.appID,
                    deviceID: try context.parameters.decoded("deviceId"),
                    attributesType: try context.parameters.decoded("attributesType")
                )
            )
            return RegistrationAnswer.response(result)
        }
        routes.app(.delete, path, role: .backend) { _, context, scope in
            let deleted = try await PushToStartTokens(client: self.database, logger: self.logger).delete(
                appID: scope.appID,
                deviceID: try context.parameters.decoded("deviceId"),
                attributesType: try context.parameters.decoded("attributesType")
            )
            guard deleted else { throw APIError.notFound("no live token for this device and attributes type") }
            return Response(status: .noContent)
        }
    }

    /// `PUT` and `DELETE /v1/apps/{bundleId}/activities/{activityId}` (backend): register or rotate, and ended by
    /// the device.
    func addActivityRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/activities/{activityId}"
        routes.app(.put, path, role: .backend) { request, context, scope in
            let body = try await request.decodeJSON(as: ActivityBody.self, context: context)
            let result = try await Activities(client: self.database, logger: self.logger).register(
                body.registration(appID: scope.appID, activityKey: try context.parameters.decoded("activityId"))
            )
            return RegistrationAnswer.response(result)
        }
        routes.app(.delete, path, role: .backend) { _, context, scope in
            let activityKey = try context.parameters.decoded("activityId")
            guard try await Activities(client: self.database, logger: self.logger).endedByDevice(appID: scope.appID, activityKey: activityKey) else {
                throw APIError.notFound("no running activity \(activityKey)", field: "activityId")
            }
            return Response(status: .noContent)
        }
    }
}
