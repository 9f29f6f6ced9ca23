package import APNs

/// An app's APNs client and the bundle id its pushes go to (its topic's stem), as the dispatcher and the reaper send
/// with them.
package struct AppClient: Sendable {
    package let client: APNsClient
    package let bundleID: String
    /// The app's row.
    package let appID: Int64
}

/// Where the dispatcher and the reaper get an app's APNs client: ``AppClients`` in a running service,
/// ``FixedAppClients`` in the tests and benchmarks.
package protocol AppClientSource: Sendable {
    /// The app's APNs client.
    /// - Throws: `StoreError` when the app is unknown or its signing key cannot be opened.
    func client(forApp appID: Int64) async throws -> AppClient
}
