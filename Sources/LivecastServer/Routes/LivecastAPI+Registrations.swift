import Hummingbird
import LivecastStore
import Logging

extension LivecastAPI {
    /// `PUT` and `DELETE /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}` (backend; client,
    /// its own device).
    func addPushToStartTokenRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}"
        routes.device(.put, path) { request, context, scope in
            let body = try await request.decodeJSON(as: PushToStartTokenBody.self, context: context)
            let deviceID = try context.parameters.decoded("deviceId")
            let attributesType = try context.parameters.decoded("attributesType")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            let userID = try await self.admittedUser(scope, userID: body.userId, assertion: body.userAssertion)
            if scope.clientDeviceID != nil { try await self.checkTokenRoom(appID: scope.appID, deviceID: deviceID, attributesType: attributesType) }
            let result = try await self.pushToStartRegistrar.register(
                body.registration(
                    appID: scope.appID,
                    deviceID: deviceID,
                    attributesType: attributesType,
                    userID: userID,
                    isByClientKey: scope.clientDeviceID != nil
                )
            )
            return RegistrationAnswer.response(result)
        }
        routes.device(.delete, path) { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            let deleted = try await PushToStartTokens(client: self.database, logger: self.logger).delete(
                appID: scope.appID,
                deviceID: deviceID,
                attributesType: try context.parameters.decoded("attributesType")
            )
            guard deleted else { throw APIError.notFound("no live token for this device and attributes type") }
            return Response(status: .noContent)
        }
    }

    /// Refuses a client key a push-to-start token for a new attributes type when its device holds its cap of live
    /// tokens already (``ClientLimits/pushToStartTokensPerDevice``).
    /// - Throws: ``APIError`` `409 device_limit_reached`.
    private func checkTokenRoom(appID: Int64, deviceID: String, attributesType: String) async throws {
        let limit = self.configuration.clientLimits.pushToStartTokensPerDevice
        let others = try await PushToStartTokens(client: self.database, logger: self.logger)
            .liveTokenCount(appID: appID, deviceID: deviceID, besides: attributesType)
        guard others < limit else {
            throw APIError(
                StoreError(
                    .deviceLimitReached,
                    "this device has \(others) live push-to-start tokens, the most one device may register; delete some first",
                    field: "attributesType"
                )
            )
        }
    }

    /// `PUT` and `DELETE /v1/apps/{bundleId}/activities/{activityId}` (backend; client, its own device's): register
    /// or rotate, and ended by the device; and `POST …/dismissed`: dismissed on the device.
    func addActivityRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/activities/{activityId}"
        routes.device(.put, path) { request, context, scope in
            let body = try await request.decodeJSON(as: ActivityBody.self, context: context)
            if let clientDeviceID = scope.clientDeviceID, let deviceID = body.deviceId, deviceID != clientDeviceID {
                throw APIError.invalid("deviceId must be absent or the Livecast-Device-ID header's", field: "deviceId")
            }
            let userID = try await self.admittedUser(scope, userID: body.userId, assertion: body.userAssertion)
            var registration = body.registration(appID: scope.appID, activityKey: try context.parameters.decoded("activityId"), userID: userID)
            registration.deviceID = registration.deviceID ?? scope.clientDeviceID
            let device = scope.clientDeviceID.map {
                Activities.DeviceScope(deviceID: $0, activityLimit: self.configuration.clientLimits.activitiesPerDevice)
            }
            let result = try await Activities(client: self.database, logger: self.logger).register(registration, device: device)
            return RegistrationAnswer.response(result)
        }
        routes.device(.delete, path) { _, context, scope in
            let activityKey = try context.parameters.decoded("activityId")
            let activities = Activities(client: self.database, logger: self.logger)
            guard try await activities.endedByDevice(appID: scope.appID, activityKey: activityKey, deviceID: scope.clientDeviceID) else {
                throw APIError.notFound("no running activity \(activityKey)", field: "activityId")
            }
            return Response(status: .noContent)
        }
        routes.device(.post, "\(path)/dismissed") { _, context, scope in
            let activityKey = try context.parameters.decoded("activityId")
            let activities = Activities(client: self.database, logger: self.logger)
            guard try await activities.dismissedByDevice(appID: scope.appID, activityKey: activityKey, deviceID: scope.clientDeviceID) else {
                throw APIError.notFound("no activity \(activityKey)", field: "activityId")
            }
            return Response(status: .noContent)
        }
    }

    /// `DELETE /v1/apps/{bundleId}/devices/{deviceId}` (backend; client, its own device): unregister the device, its
    /// push-to-start tokens and its running activities.
    func addDeviceRoutes(to routes: RouteRegistrar) {
        routes.device(.delete, "/v1/apps/{bundleId}/devices/{deviceId}") { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            let unregistration = try await Devices(client: self.database, logger: self.logger).unregister(appID: scope.appID, deviceID: deviceID)
            context.logger.info(
                "device unregistered",
                metadata: [
                    "livecast.invalidated_tokens": "\(unregistration.invalidatedTokens)",
                    "livecast.ended_activities": "\(unregistration.endedActivities)",
                ]
            )
            return Response(status: .noContent)
        }
    }
}
