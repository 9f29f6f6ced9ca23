import Hummingbird
import LivecastStore

/// The app a `/v1/apps/{bundleId}/…` request is about, once the caller's key was checked against it.
struct AppScope: Sendable {
    let appID: Int64
    let bundleID: String
    let caller: APIKeys.Caller
    /// The device a client key's request names (`Livecast-Device-ID`), the only one it may act on; `nil` for the
    /// other roles, which may act on any device of the app.
    let clientDeviceID: String?

    /// Checks the caller against the path's app and the route's role.
    /// - Parameters:
    ///   - role: The least role of the route's keys.
    ///   - clients: For a route client keys may call too (their own device's registrations): reads and rate-limits
    ///     the device a client key's request names (and checks the header of any other key that sends it). `nil`:
    ///     client keys are refused like any role below `role`.
    /// - Throws: ``APIError``: 401 without a caller; 404 when the path names another app than the key's (keys
    ///   never learn whether other apps exist); 403 when the key's role is below `role` (a client key's, unless
    ///   `clients` is given); a client key's device errors (``ClientKeys/device(of:appID:)``).
    init(context: APIRequestContext, role: APIKeys.Role, request: Request? = nil, clients: ClientKeys? = nil) throws {
        guard let caller = context.caller else { throw APIError.unauthenticated }
        let bundleID = try context.parameters.decoded("bundleId")
        guard bundleID == caller.bundleID else { throw APIError.notFound("no app \(bundleID)", field: "bundleId") }
        if caller.role == .client, let clients, let request {
            self.clientDeviceID = try clients.device(of: request, appID: caller.appID)
        } else {
            guard caller.role >= role else { throw APIError.forbidden(needs: role.rawValue) }
            if clients != nil, let request { _ = try ClientKeys.checkedDevice(of: request) }
            self.clientDeviceID = nil
        }
        self.appID = caller.appID
        self.bundleID = bundleID
        self.caller = caller
    }

    /// Checks that a device named by the request (its path or body) is the client key's own: any device for the
    /// other roles.
    /// - Throws: ``APIError`` `404 not_found` naming `field` for another device than a client key's.
    func checkOwnDevice(_ deviceID: String?, field: String) throws {
        guard let clientDeviceID, let deviceID, deviceID != clientDeviceID else { return }
        throw APIError.notFound("no device \(deviceID) for this key: a client key acts on the Livecast-Device-ID device only", field: field)
    }
}
