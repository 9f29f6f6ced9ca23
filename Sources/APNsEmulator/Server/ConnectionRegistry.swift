import NIOConcurrencyHelpers
import NIOCore

/// The emulator's open connections, so the control plane and shutdown can act on all of them.
final class ConnectionRegistry: Sendable {
    /// What the registry asks a connection to do; delivered as a user outbound event.
    enum Command: Sendable {
        case goAway(reason: String)
        case drop
        /// Lower (or raise) `MAX_CONCURRENT_STREAMS` with a SETTINGS frame, as APNs does after refusals.
        case limitStreams(Int)
    }

    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    func add(_ channel: any Channel) {
        self.channels.withLockedValue { $0[ObjectIdentifier(channel)] = channel }
    }

    func remove(_ channel: any Channel) {
        self.channels.withLockedValue { $0[ObjectIdentifier(channel)] = nil }
    }

    /// How many connections are open.
    var count: Int {
        self.channels.withLockedValue { $0.count }
    }

    /// Sends GOAWAY on every connection but one. - Returns: how many connections were told.
    func goAway(reason: String, sparing spared: ObjectIdentifier?) -> Int {
        self.send(.goAway(reason: reason), sparing: spared)
    }

    /// Closes every connection but one without a word. - Returns: how many connections were closed.
    func drop(sparing spared: ObjectIdentifier?) -> Int {
        self.send(.drop, sparing: spared)
    }

    /// Sends every connection a SETTINGS frame with `MAX_CONCURRENT_STREAMS` = `limit`, kept for the rest of the
    /// connection. - Returns: how many connections were told.
    func limitStreams(to limit: Int) -> Int {
        self.send(.limitStreams(limit), sparing: nil)
    }

    private func send(_ command: Command, sparing spared: ObjectIdentifier?) -> Int {
        let targets = self.channels.withLockedValue { channels in channels.filter { $0.key != spared }.map(\.value) }
        for channel in targets {
            channel.triggerUserOutboundEvent(command, promise: nil)
        }
        return targets.count
    }
}
