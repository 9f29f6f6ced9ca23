import Hummingbird
import LivecastStore
import Logging

/// What a client key's registration is held to beyond its own device (``ClientKeys``): a published key is a
/// stranger's, so it names a user only with the app's identity assertion, brings new devices only under the app's
/// hourly ceiling, and holds a device's tokens and activities under their caps.
struct ClientAdmission: Sendable {
    /// The keys that sign the identity assertions.
    let identityKeys: IdentityKeys
    /// The devices client keys registered, for their ceiling of new devices an hour.
    let clientDevices: ClientDevices
    /// The tokens a device holds, for its cap.
    let pushToStartTokens: PushToStartTokens
    /// The caps and ceilings.
    let limits: ClientLimits

    /// What a registration binds as its user, once a client key's registration passed what a published key is held
    /// to: a `userId` only with a valid identity assertion (``IdentityAssertions``), and a device new to the app only
    /// under the app's ceiling of new client devices an hour (``ClientLimits/newDevicesPerHour``). Other keys bind
    /// the `userId` they send.
    /// - Throws: ``APIError``: those of ``IdentityAssertions/user(named:assertion:appID:bundleID:deviceID:now:)``;
    ///   `429 rate_limited` with `Retry-After` for a new device over the ceiling.
    func user(_ scope: AppScope, userID: String?, assertion: String?, logger: Logger) async throws -> String? {
        guard let deviceID = scope.clientDeviceID else { return userID }
        let user = try await IdentityAssertions(keys: self.identityKeys.logging(to: logger))
            .user(named: userID, assertion: assertion, appID: scope.appID, bundleID: scope.bundleID, deviceID: deviceID)
        let ceiling = self.limits.newDevicesPerHour
        if let wait = try await self.clientDevices.logging(to: logger).admit(appID: scope.appID, deviceID: deviceID, ceiling: ceiling) {
            throw APIError.rateLimited(
                "this app's client keys registered \(ceiling) new devices in the last hour, the most they may",
                retryAfter: Int(wait.components.seconds) + 1
            )
        }
        return user
    }

    /// Refuses a client key a push-to-start token for a new attributes type when its device holds its cap of live
    /// tokens already (``ClientLimits/pushToStartTokensPerDevice``).
    /// - Throws: ``APIError`` `409 device_limit_reached`.
    func checkTokenRoom(appID: Int64, deviceID: String, attributesType: String, logger: Logger) async throws {
        let limit = self.limits.pushToStartTokensPerDevice
        let others = try await self.pushToStartTokens.logging(to: logger)
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

    /// The bounds of a client key's activity registration: its own device and its cap of running activities; `nil`
    /// for other keys.
    func deviceScope(_ scope: AppScope) -> Activities.DeviceScope? {
        scope.clientDeviceID.map { Activities.DeviceScope(deviceID: $0, activityLimit: self.limits.activitiesPerDevice) }
    }
}
