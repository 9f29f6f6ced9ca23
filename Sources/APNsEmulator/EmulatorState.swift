import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// Everything the emulator remembers between requests: devices, channels, faults and the device clock.
/// Shared by all connections' event loops behind one lock.
final class EmulatorState: Sendable {
    struct Contents {
        var fleet = DeviceFleet()
        var channels: ChannelStore
        var faults: FaultPlan
        /// Seconds added to the wall clock to get the devices' clock.
        var clockOffset = 0
        /// Apple's data export: what the devices did, per day, and the exports requested.
        var dataExports = DataExportBook()
    }

    let configuration: APNsEmulator.Configuration
    let trustedKeys: [String: TrustedKey]
    /// APNs requests answered (or faulted) after authentication, since start.
    let answeredRequests = Synchronization.Atomic<Int>(0)
    /// HTTP/2 PING frames received from clients (keep-alives), since start.
    let receivedPings = Synchronization.Atomic<Int>(0)
    /// Device pushes and broadcasts as they arrived, when ``APNsEmulator/Configuration/recordsWire`` is on.
    let wire: WireLog?
    private let contents: NIOLockedValueBox<Contents>

    init(configuration: APNsEmulator.Configuration) {
        self.configuration = configuration
        self.trustedKeys = Dictionary(
            configuration.trustedKeys.map { (ProviderToken.keyName(teamID: $0.teamID, keyID: $0.keyID), $0) },
            uniquingKeysWith: { _, last in last }
        )
        self.wire = configuration.recordsWire ? WireLog() : nil
        var contents = Contents(channels: ChannelStore(limit: configuration.channelLimit), faults: configuration.faults)
        for token in configuration.dataExportTokens { contents.dataExports.tokens[token.token] = token }
        self.contents = NIOLockedValueBox(contents)
    }

    /// Runs `body` with exclusive access to the contents.
    func withLock<Value, Failure: Error>(_ body: (inout Contents) throws(Failure) -> Value) throws(Failure) -> Value {
        let result = self.contents.withLockedValue { contents in
            Result { () throws(Failure) -> Value in try body(&contents) }
        }
        return try result.get()
    }

    /// The wall clock, in seconds since 1970: what provider tokens are checked against.
    static var wallClock: Int { Int(Date().timeIntervalSince1970) }

    /// The wall clock in milliseconds, as in 410 answers.
    static var wallClockMillis: Int { Int(Date().timeIntervalSince1970 * 1000) }
}

extension EmulatorState.Contents {
    /// The devices' clock, in seconds since 1970.
    var deviceNow: Int { EmulatorState.wallClock + self.clockOffset }

    /// The context deliveries are judged in now, by the configuration's device rules.
    func deliveryContext(_ configuration: APNsEmulator.Configuration) -> DeliveryContext {
        let channels = self.channels
        return DeliveryContext(
            now: self.deviceNow,
            priority10Budget: configuration.priority10Budget,
            pushToStartBudget: configuration.pushToStartBudget,
            activityLifetime: configuration.activityLifetime
        ) { id, bundleID in
            channels.channel(id, bundleID: bundleID) != nil
        }
    }
}
