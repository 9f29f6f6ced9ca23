package import APNs
import LivecastStore

/// The one test double of ``AppClientSource``: one APNs client (the emulator's) for every app, or for the listed apps
/// only, the others asked of `otherwise` or refused as if their signing key could not be opened.
package struct FixedAppClients: AppClientSource {
    private let client: APNsClient?
    private let bundleID: String
    private let apps: Set<Int64>?
    private let otherwise: (any AppClientSource)?

    /// - Parameters:
    ///   - client: The client every app (or every listed app) sends with.
    ///   - bundleID: The bundle id its pushes go to.
    ///   - apps: The apps it serves; every app when `nil`.
    ///   - otherwise: Where the other apps' clients come from; when `nil`, their keys cannot be opened.
    package init(_ client: APNsClient, bundleID: String, apps: Set<Int64>? = nil, otherwise: (any AppClientSource)? = nil) {
        self.client = client
        self.bundleID = bundleID
        self.apps = apps
        self.otherwise = otherwise
    }

    private init() {
        self.client = nil
        self.bundleID = ""
        self.apps = []
        self.otherwise = nil
    }

    /// No app's signing key can be opened: for work that must never reach APNs.
    package static let none = FixedAppClients()

    package func client(forApp appID: Int64) async throws -> AppClient {
        if let client = self.client, self.apps?.contains(appID) ?? true {
            return AppClient(client: client, bundleID: self.bundleID, appID: appID)
        }
        if let otherwise = self.otherwise { return try await otherwise.client(forApp: appID) }
        throw StoreError(.invalid, "app \(appID) has no APNs client here")
    }
}
