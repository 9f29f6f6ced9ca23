import LivecastStore
import Logging
import PostgresNIO

/// What both lanes (``FanOutRunner``, ``QuickLane``) send and record with; each lane holds them as `tools`.
struct LaneTools: Sendable {
    let recorder: PushRecorder
    let sender: PageSender
    let broadcaster: Broadcaster
    /// The apps' APNs clients.
    let appClients: any AppClientSource

    /// The store, the outbox and the logger are the recorder's: the lanes and their recorder work with the same ones.
    var database: PostgresClient { self.recorder.database }
    var outbox: Outbox { self.recorder.outbox }
    var logger: Logger { self.recorder.logger }
}
