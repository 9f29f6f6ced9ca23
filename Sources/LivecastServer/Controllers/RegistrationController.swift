import Hummingbird
import LivecastService
import LivecastStore
import Logging

/// What devices register, for their backend or, with a client key, for their own device only:
/// - `PUT` and `DELETE /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}` (backend; client),
///   and `GET …/push-to-start-tokens/{deviceId}` (backend): a device's push-to-start tokens;
/// - `PUT` and `DELETE /v1/apps/{bundleId}/activities/{activityId}` (backend; client): register or rotate, and ended
///   by the device; `POST …/dismissed`: dismissed on the device;
/// - `DELETE /v1/apps/{bundleId}/devices/{deviceId}` (backend; client): unregister the device, its push-to-start
///   tokens and its running activities.
struct RegistrationController: APIController {
    let records: Records
    /// Ends the activities renewals replaced.
    let renewalEnds: RenewalEnds
    /// Writes concurrent push-to-start registrations together.
    let pushToStartRegistrar: PushToStartRegistrar
    let pushToStartTokens: PushToStartTokens
    let activities: Activities
    let devices: Devices
    /// What client keys' registrations are held to.
    let admission: ClientAdmission

    func addRoutes(to routes: RouteRegistrar) {
        self.addPushToStartTokenRoutes(to: routes)
        self.addActivityRoutes(to: routes)
        routes.device(.delete, "/v1/apps/{bundleId}/devices/{deviceId}") { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            let unregistration = try await self.devices.logging(to: context.logger).unregister(appID: scope.appID, deviceID: deviceID)
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

    private func addPushToStartTokenRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}"
        routes.device(.put, path, admitsDevice: true) { request, context, scope in
            let body = try await request.decodeJSON(as: PushToStartTokenBody.self, context: context)
            let deviceID = try context.parameters.decoded("deviceId")
            let attributesType = try context.parameters.decoded("attributesType")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            var registration = body.registration(appID: scope.appID, deviceID: deviceID, attributesType: attributesType, userID: nil)
            registration.isByClientKey = scope.clientDeviceID != nil
            registration.deviceTokenCap = self.admission.deviceTokenCap(scope)
            // A malformed token is refused before the device is admitted: only an admitted registration counts it.
            registration = try registration.checked()
            registration.userID = try await self.admission.user(
                scope,
                userID: body.userId,
                assertion: body.userAssertion,
                address: context.clientAddress,
                logger: context.logger
            )
            return RegistrationAnswer.response(try await self.pushToStartRegistrar.register(registration))
        }
        routes.device(.delete, path) { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            try scope.checkOwnDevice(deviceID, field: "deviceId")
            let deleted = try await self.pushToStartTokens.logging(to: context.logger).delete(
                appID: scope.appID,
                deviceID: deviceID,
                attributesType: try context.parameters.decoded("attributesType")
            )
            guard deleted else { throw APIError.notFound("no live token for this device and attributes type") }
            return Response(status: .noContent)
        }
        routes.app(.get, "/v1/apps/{bundleId}/push-to-start-tokens/{deviceId}", role: .backend) { _, context, scope in
            let deviceID = try context.parameters.decoded("deviceId")
            guard let device = try await self.records.logging(to: context.logger).deviceTokens(appID: scope.appID, deviceID: deviceID)
            else {
                throw APIError.notFound("no push-to-start token of device \(deviceID)", field: "deviceId")
            }
            return device
        }
    }

    private func addActivityRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/activities/{activityId}"
        routes.device(.put, path, admitsDevice: true) { request, context, scope in
            let body = try await request.decodeJSON(as: ActivityBody.self, context: context)
            if let clientDeviceID = scope.clientDeviceID, let deviceID = body.deviceId, deviceID != clientDeviceID {
                throw APIError.invalid("deviceId must be absent or the Livecast-Device-ID header's", field: "deviceId")
            }
            let userID = try await self.admission.user(
                scope,
                userID: body.userId,
                assertion: body.userAssertion,
                address: context.clientAddress,
                logger: context.logger
            )
            var registration = body.registration(appID: scope.appID, activityKey: try context.parameters.decoded("activityId"), userID: userID)
            registration.deviceID = registration.deviceID ?? scope.clientDeviceID
            let registered = try await self.activities.logging(to: context.logger).record(registration, device: self.admission.deviceScope(scope))
            if let replaced = registered.renewedActivityToEnd {
                await self.endRenewed(replaced, appID: scope.appID, logger: context.logger)
            }
            return RegistrationAnswer.response(registered.result)
        }
        routes.device(.delete, path) { _, context, scope in
            let activityKey = try context.parameters.decoded("activityId")
            let activities = self.activities.logging(to: context.logger)
            guard try await activities.endedByDevice(appID: scope.appID, activityKey: activityKey, deviceID: scope.clientDeviceID) else {
                throw APIError.notFound("no running activity \(activityKey)", field: "activityId")
            }
            return Response(status: .noContent)
        }
        routes.device(.post, "\(path)/dismissed") { _, context, scope in
            let activityKey = try context.parameters.decoded("activityId")
            let activities = self.activities.logging(to: context.logger)
            guard try await activities.dismissedByDevice(appID: scope.appID, activityKey: activityKey, deviceID: scope.clientDeviceID) else {
                throw APIError.notFound("no activity \(activityKey)", field: "activityId")
            }
            return Response(status: .noContent)
        }
    }

    /// Ends the activity a renewal replaced, now that its successor can be updated; the reaper ends it later if this
    /// fails, and the registration is answered either way.
    private func endRenewed(_ activityKey: String, appID: Int64, logger: Logger) async {
        do {
            try await self.renewalEnds.logging(to: logger).end(activityKey, appID: appID)
        } catch {
            logger.warning("could not end a renewed activity; the reaper will", metadata: ["activity": "\(activityKey)", "error": "\(error)"])
        }
    }
}
