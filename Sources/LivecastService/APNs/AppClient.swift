import APNs

/// An app's APNs client and the bundle id its pushes go to (its topic's stem), as the dispatcher sends with them.
struct AppClient: Sendable {
    let client: APNsClient
    let bundleID: String
    /// The app's row.
    let appID: Int64
}
