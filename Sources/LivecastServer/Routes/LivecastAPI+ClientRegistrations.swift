import Hummingbird
import LivecastStore

extension LivecastAPI {
    /// What a registration binds as its user, once a client key's registration passed what a published key is held
    /// to: a `userId` only with a valid identity assertion (``IdentityAssertions``), and a device new to the app only
    /// under the app's ceiling of new client devices an hour (``ClientLimits/newDevicesPerHour``). Other keys bind
    /// the `userId` they send.
    /// - Throws: ``APIError``: those of ``IdentityAssertions/user(named:assertion:appID:bundleID:deviceID:now:)``;
    ///   `429 rate_limited` with `Retry-After` for a new device over the ceiling.
    func admittedUser(_ scope: AppScope, userID: String?, assertion: String?) async throws -> String? {
        guard let deviceID = scope.clientDeviceID else { return userID }
        let user = try await IdentityAssertions(keys: IdentityKeys(client: self.database, logger: self.logger))
            .user(named: userID, assertion: assertion, appID: scope.appID, bundleID: scope.bundleID, deviceID: deviceID)
        let ceiling = self.configuration.clientLimits.newDevicesPerHour
        if let wait = try await ClientDevices(client: self.database, logger: self.logger).admit(
            appID: scope.appID,
            deviceID: deviceID,
            ceiling: ceiling
        ) {
            throw APIError.rateLimited(
                "this app's client keys registered \(ceiling) new devices in the last hour, the most they may",
                retryAfter: Int(wait.components.seconds) + 1
            )
        }
        return user
    }
}
