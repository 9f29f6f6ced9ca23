import LivecastStore
import Logging
import PostgresNIO

/// What both lanes (``FanOutRunner``, ``QuickLane``) send and record with. Each lane reads these as its own
/// members (`@dynamicMemberLookup`).
struct LaneTools: Sendable {
    let database: PostgresClient
    let outbox: Outbox
    let recorder: PushRecorder
    let sender: PageSender
    let broadcaster: Broadcaster
    let clientForApp: Dispatcher.ClientForApp
    let logger: Logger

    /// The app's APNs client. - Throws: `StoreError` when its signing key cannot be opened.
    func client(ofApp appID: Int64) async throws -> AppClient {
        let (client, bundleID) = try await self.clientForApp(appID)
        return AppClient(client: client, bundleID: bundleID)
    }
}
