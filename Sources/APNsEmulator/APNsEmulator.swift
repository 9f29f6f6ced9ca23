import NIOConcurrencyHelpers
public import NIOCore
public import NIOPosix
import NIOSSL
import Synchronization

/// An APNs emulator: speaks Apple's protocol over TLS + HTTP/2 (ALPN `h2`) on two ports, and shows through a
/// simulated device fleet what real phones would display.
///
/// - The push port serves `POST /3/device/{token}`, `POST /4/broadcasts/apps/{bundleId}`, and the emulator's own
///   control plane under `/emulator` (see ``ControlPlane``).
/// - The management port serves channel management: `/1/apps/{bundleId}/channels` and `/all-channels`.
///
/// Every APNs request needs an ES256 provider token signed by one of ``Configuration/trustedKeys``.
///
/// ```swift
/// let emulator = try await APNsEmulator.start(configuration: .init(trustedKeys: [key]))
/// let device = try emulator.addDevice(bundleID: "com.example.game", osVersion: "18.2", pushToStartTokens: ["GameAttributes": ""])
/// // … point a client at https://localhost:\(emulator.pushPort), trusting emulator.certificatePEM …
/// await emulator.shutdown()
/// ```
public final class APNsEmulator: Sendable {
    /// How the emulator was started.
    public let configuration: Configuration
    /// The port for device pushes, broadcasts and `/emulator`.
    public let pushPort: Int
    /// The port for channel management.
    public let managementPort: Int
    /// The self-signed certificate clients must trust, in PEM form.
    public let certificatePEM: String

    let state: EmulatorState
    private let connections: ConnectionRegistry
    private let listeners: [any Channel]

    private init(
        configuration: Configuration,
        state: EmulatorState,
        connections: ConnectionRegistry,
        listeners: [any Channel],
        certificatePEM: String
    ) {
        self.configuration = configuration
        self.state = state
        self.connections = connections
        self.listeners = listeners
        self.pushPort = listeners[0].localAddress?.port ?? configuration.pushPort
        self.managementPort = listeners[1].localAddress?.port ?? configuration.managementPort
        self.certificatePEM = certificatePEM
        let pushPort = self.pushPort
        state.withLock { $0.dataExports.baseURL = "https://localhost:\(pushPort)" }
    }

    /// Starts an emulator; both ports accept connections when this returns.
    /// - Parameters:
    ///   - configuration: Ports, trusted keys and behaviour.
    ///   - eventLoopGroup: The event loops to serve on. Defaults to NIO's shared multi-threaded group.
    /// - Throws: When a port cannot be bound or the certificate cannot be made.
    public static func start(
        configuration: Configuration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> APNsEmulator {
        let certificate = try SelfSignedCertificate(hostNames: configuration.certificateHostNames)
        let tls = try certificate.makeServerContext()
        let state = EmulatorState(configuration: configuration)
        let connections = ConnectionRegistry()
        let control = ControlPlane(state: state, connections: connections)
        var listeners: [any Channel] = []
        do {
            for (listener, port) in [(EmulatorResponder.Listener.push, configuration.pushPort), (.management, configuration.managementPort)] {
                let responder = EmulatorResponder(state: state, control: control, listener: listener)
                let channel = try await Self.bind(
                    host: configuration.host,
                    port: port,
                    tls: tls,
                    responder: responder,
                    connections: connections,
                    maximumConcurrentStreams: configuration.maximumConcurrentStreams,
                    latency: configuration.latency,
                    group: eventLoopGroup
                )
                listeners.append(channel)
            }
        } catch {
            for channel in listeners { try? await channel.close() }
            throw error
        }
        return APNsEmulator(
            configuration: configuration,
            state: state,
            connections: connections,
            listeners: listeners,
            certificatePEM: certificate.pem
        )
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        for channel in self.listeners {
            try? await channel.close()
        }
        _ = self.connections.drop(sparing: nil)
    }

    private static func bind(
        host: String,
        port: Int,
        tls: NIOSSLContext,
        responder: EmulatorResponder,
        connections: ConnectionRegistry,
        maximumConcurrentStreams: Int,
        latency: EmulatorLatency,
        group: any EventLoopGroup
    ) async throws -> any Channel {
        try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 512)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                    try pipeline.addHandler(
                        EmulatorConnectionHandler(
                            responder: responder,
                            registry: connections,
                            maximumConcurrentStreams: maximumConcurrentStreams,
                            latency: latency
                        )
                    )
                }
            }
            .bind(host: host, port: port)
            .get()
    }
}

extension APNsEmulator {
    /// Adds a simulated device.
    /// - Parameters:
    ///   - bundleID: The app installed on the device.
    ///   - osVersion: The iOS version, such as `"18.2"` (channels need 18 or later). Defaults to `"18.0"`.
    ///   - pushToStartTokens: Push-to-start tokens by `ActivityAttributes` type; an empty string gets a random
    ///     token. Defaults to none.
    /// - Returns: The device as it is now, with its tokens.
    /// - Throws: ``APNsEmulatorError`` when a given token is not hex or already in use.
    public func addDevice(
        bundleID: String,
        osVersion: String = "18.0",
        pushToStartTokens: [String: String] = [:]
    ) throws(APNsEmulatorError) -> DeviceSnapshot {
        do {
            return try self.state.addDevice(bundleID: bundleID, osVersion: osVersion, pushToStartTokens: pushToStartTokens)
        } catch {
            throw APNsEmulatorError(message: "push-to-start tokens must be unique hex strings")
        }
    }

    /// Every simulated device as it is now.
    public func devices() -> [DeviceSnapshot] {
        self.state.devices()
    }

    /// One simulated device as it is now, or `nil` for an unknown id.
    public func device(id: String) -> DeviceSnapshot? {
        self.state.device(id: id)
    }

    /// Rotates a device's push-to-start token for an attributes type; the old token answers `410 Unregistered`.
    /// - Returns: The new token, or `nil` when the device has none for that type.
    public func rotatePushToStartToken(deviceID: String, attributesType: String) -> String? {
        self.state.rotatePushToStartToken(deviceID: deviceID, attributesType: attributesType)
    }

    /// Rotates a token-based activity's update token; the old token answers `410 Unregistered`.
    /// - Returns: The new token, or `nil` when there is no such token-based activity.
    public func rotateUpdateToken(deviceID: String, activityID: String) -> String? {
        self.state.rotateUpdateToken(deviceID: deviceID, activityID: activityID)
    }

    /// Removes an activity from its device without an end, as the system or the user may; its token keeps
    /// answering 200 and the device ignores what it gets (`activityLost`).
    /// - Returns: Whether there was such an activity.
    @discardableResult
    public func loseActivity(deviceID: String, activityID: String) -> Bool {
        self.state.loseActivity(deviceID: deviceID, activityID: activityID)
    }

    /// Moves the devices' clock forward (stale and dismissal dates, the 8-hour limit).
    /// - Returns: The devices' time afterwards, in seconds since 1970.
    @discardableResult
    public func advanceClock(by seconds: Int) -> Int {
        self.state.advanceClock(by: seconds)
    }

    /// The devices' clock, in seconds since 1970.
    public var deviceNow: Int {
        self.state.deviceNow
    }

    /// The faults in force.
    public var faults: FaultPlan {
        self.state.faults
    }

    /// Replaces the faults in force.
    public func setFaults(_ plan: FaultPlan) {
        self.state.setFaults(plan)
    }

    /// How many client connections are open on both ports.
    public var openConnections: Int {
        self.connections.count
    }

    /// How many authenticated APNs requests the emulator has handled since it started.
    public var answeredRequests: Int {
        self.state.answeredRequests.load(ordering: .relaxed)
    }

    /// How many keep-alive PINGs clients have sent since the emulator started.
    public var receivedPings: Int {
        self.state.receivedPings.load(ordering: .relaxed)
    }

    /// Sends GOAWAY with `{"reason": …}` on every open connection, then closes them.
    /// - Returns: How many connections were told.
    @discardableResult
    public func sendGoAway(reason: String = "Shutdown") -> Int {
        self.connections.goAway(reason: reason, sparing: nil)
    }

    /// Sends a SETTINGS frame lowering (or raising) `MAX_CONCURRENT_STREAMS` to `limit` on every open connection, as
    /// APNs does after refusals; it holds for the rest of each connection.
    /// - Returns: How many connections were told.
    @discardableResult
    public func limitStreams(to limit: Int) -> Int {
        self.connections.limitStreams(to: max(limit, 1))
    }

    /// Closes every open connection without a word.
    /// - Returns: How many connections were closed.
    @discardableResult
    public func dropConnections() -> Int {
        self.connections.drop(sparing: nil)
    }
}

/// A request to the emulator's Swift API that cannot be carried out.
public struct APNsEmulatorError: Error, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    public var description: String { self.message }
}
