import LivecastStore
import Logging
import PostgresNIO

/// What both lanes (``FanOutRunner``, ``QuickLane``) send and record with; each lane holds them as `tools`.
struct LaneTools: Sendable {
    let recorder: PushRecorder
    let sender: PageSender
    let broadcaster: Broadcaster
    let clientForApp: Dispatcher.ClientForApp

    /// The store, the outbox and the logger are the recorder's: the lanes and their recorder work with the same ones.
    var database: PostgresClient { self.recorder.database }
    var outbox: Outbox { self.recorder.outbox }
    var logger: Logger { self.recorder.logger }

    /// The app's APNs client. - Throws: `StoreError` when its signing key cannot be opened.
    func client(ofApp appID: Int64) async throws -> AppClient {
        let (client, bundleID) = try await self.clientForApp(appID)
        return AppClient(client: client, bundleID: bundleID, appID: appID)
    }
}
