import Hummingbird
import LivecastStore
import Logging

/// What a client key's registration is held to beyond its own device (``ClientKeys``): a published key is a
/// stranger's, so it names a user only with the app's identity assertion, brings new devices only under the app's
/// hourly ceiling and its address's share of it, and holds a device's tokens and activities under their caps.
struct ClientAdmission: Sendable {
    /// The keys that sign the identity assertions.
    let identityKeys: IdentityKeys
    /// The device header, the rate limits and the gate every instance shares.
    let clients: ClientKeys

    /// What a registration binds as its user, once a client key's registration passed what a published key is held
    /// to: a `userId` only with a valid identity assertion (``IdentityAssertions``), and the gate of client requests
    /// with its device's admission (``ClientKeys/pass(_:address:admission:logger:)``): a device new to the app only
    /// under the app's ceiling of new client devices an hour and its address's share of it, unless a valid
    /// assertion came with it. The device counts once all of this admitted it. Other keys bind the `userId` they
    /// send.
    /// - Parameter address: The client's address as rate limits key it (``APIRequestContext/clientAddress``).
    /// - Throws: ``APIError``: those of ``IdentityAssertions/user(named:assertion:appID:bundleID:deviceID:now:)``;
    ///   `429 rate_limited` with `Retry-After` over a rate, the ceiling or the address's share.
    func user(_ scope: AppScope, userID: String?, assertion: String?, address: String?, logger: Logger) async throws -> String? {
        guard let deviceID = scope.clientDeviceID else { return userID }
        let user = try await IdentityAssertions(keys: self.identityKeys.logging(to: logger))
            .user(named: userID, assertion: assertion, appID: scope.appID, bundleID: scope.bundleID, deviceID: deviceID)
        let admission = self.clients.admission(isVouched: assertion != nil && user != nil)
        try await self.clients.pass(scope, address: address, admission: admission, logger: logger)
        return user
    }

    /// The cap of live push-to-start tokens on a client key's device, checked as its registration is written
    /// (``PushToStartTokens/Registration/deviceTokenCap``); `nil` for other keys.
    func deviceTokenCap(_ scope: AppScope) -> Int? {
        scope.clientDeviceID.map { _ in self.clients.limits.pushToStartTokensPerDevice }
    }

    /// The bounds of a client key's activity registration: its own device and its cap of running activities; `nil`
    /// for other keys.
    func deviceScope(_ scope: AppScope) -> Activities.DeviceScope? {
        scope.clientDeviceID.map { Activities.DeviceScope(deviceID: $0, activityLimit: self.clients.limits.activitiesPerDevice) }
    }
}
