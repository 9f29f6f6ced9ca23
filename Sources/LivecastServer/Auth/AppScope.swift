import Hummingbird
import LivecastStore

/// The app a `/v1/apps/{bundleId}/…` request is about, once the caller's key was checked against it.
struct AppScope: Sendable {
    let appID: Int64
    let bundleID: String
    let caller: APIKeys.Caller

    /// Checks the caller against the path's app and the route's role.
    /// - Throws: ``APIError``: 401 without a caller; 404 when the path names another app than the key's (keys
    ///   never learn whether other apps exist); 403 when the key's role is below `role`.
    init(context: APIRequestContext, role: APIKeys.Role) throws {
        guard let caller = context.caller else { throw APIError.unauthenticated }
        let bundleID = try context.parameters.decoded("bundleId")
        guard bundleID == caller.bundleID else { throw APIError.notFound("no app \(bundleID)", field: "bundleId") }
        guard caller.role >= role else { throw APIError.forbidden(needs: role.rawValue) }
        self.appID = caller.appID
        self.bundleID = bundleID
        self.caller = caller
    }
}
