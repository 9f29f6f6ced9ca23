import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Up to a set number of HTTP/2 connections to one host and port, sharing one `authorization` source.
///
/// The first request opens one connection. A batch of ``busyBatch`` requests or more opens every connection the pool
/// may have before it is spread over them, and another opens whenever every stream the server allows on a connection
/// is busy and requests wait, up to the set number: a quiet app holds one connection, and a busy one as many as it
/// may from its first fan-out page on. Batches are spread over the connections in one hop per connection. A
/// connection that drains (GOAWAY) or drops is replaced at once (or after a growing, jittered delay while connecting
/// keeps failing), and the requests it hands back move to the new one.
final class HTTP2ConnectionPool: Sendable {
    private struct Slot {
        var handler: NIOLoopBoundBox<HTTP2ConnectionHandler>
        var identity: ObjectIdentifier
        /// Failed connection attempts in a row.
        var failures: Int
        var channel: (any Channel)?
    }

    private struct State {
        var slots: [Slot] = []
        var next = 0
        var isShutDown = false
    }

    let endpoint: APNsClient.Endpoint
    private let tls: NIOSSLContext
    private let serverHostname: String?
    private let authorization: any HTTP2Authorization
    private let settings: TransportSettings
    private let group: any EventLoopGroup
    private let logger: Logger
    /// The most connections the pool opens.
    private let connections: Int
    private let state = NIOLockedValueBox(State())

    init(
        endpoint: APNsClient.Endpoint,
        connections: Int,
        tls: NIOSSLContext,
        authorization: any HTTP2Authorization,
        settings: TransportSettings,
        group: any EventLoopGroup,
        logger: Logger
    ) {
        self.endpoint = endpoint
        self.tls = tls
        // SNI takes a name, not an address.
        self.serverHostname = endpoint.host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : endpoint.host
        self.authorization = authorization
        self.settings = settings
        self.group = group
        self.logger = logger
        self.connections = max(connections, 1)
    }

    /// The fewest requests handed over at once that open every connection the pool may have: a busy app's (a fan-out
    /// page, a full batch of the quick lane), not a quiet one's few. Waiting for a connection's streams to fill instead
    /// left the first fan-out on one connection with the whole first window queued on it, and a server that allows
    /// a thousand streams (APNs) never filled one, so a dropped connection stalled every request in flight
    /// (docs/PERFORMANCE.md).
    static let busyBatch = 100

    /// Sends exchanges, spread evenly over the connections.
    func submit(_ exchanges: [HTTP2Exchange]) {
        guard !exchanges.isEmpty else { return }
        let (handlers, start, isShutDown) = self.state.withLockedValue { state in
            if state.slots.isEmpty, !state.isShutDown {
                // The first connection is made on first use.
                state.slots = [self.makeSlot(failures: 0, previousError: nil)]
            }
            if exchanges.count >= Self.busyBatch, !state.isShutDown {
                while state.slots.count < self.connections { state.slots.append(self.makeSlot(failures: 0, previousError: nil)) }
            }
            let start = state.next
            state.next &+= 1
            return (state.slots.map(\.handler), start, state.isShutDown)
        }
        if isShutDown || handlers.isEmpty {
            for exchange in exchanges { exchange.complete(.failure(TransportError(.shutdown, "the APNs client was shut down"))) }
            return
        }
        if exchanges.count == 1 || handlers.count == 1 {
            return Self.dispatch(exchanges, to: handlers[start % handlers.count])
        }
        let share = (exchanges.count + handlers.count - 1) / handlers.count
        for (index, chunkStart) in stride(from: 0, to: exchanges.count, by: share).enumerated() {
            let chunk = Array(exchanges[chunkStart..<min(chunkStart + share, exchanges.count)])
            Self.dispatch(chunk, to: handlers[(start + index) % handlers.count])
        }
    }

    /// Sends again exchanges a connection handed back, forgetting any partial response.
    func resend(_ exchanges: [HTTP2Exchange]) {
        for exchange in exchanges { exchange.resetForRetry() }
        self.submit(exchanges)
    }

    /// Opens one more connection, unless the pool has as many as it may: a connection's streams are all busy.
    private func grow() {
        self.state.withLockedValue { state in
            guard !state.isShutDown, !state.slots.isEmpty, state.slots.count < self.connections else { return }
            state.slots.append(self.makeSlot(failures: 0, previousError: nil))
        }
    }

    /// Closes every connection; what is unanswered fails with ``TransportError/Code/shutdown``.
    func shutdown() async {
        let slots = self.state.withLockedValue { state in
            state.isShutDown = true
            return state.slots
        }
        for slot in slots {
            let handler = slot.handler
            try? await handler.eventLoop.submit { handler.value.close() }.get()
            try? await slot.channel?.closeFuture.get()
        }
    }

    private static func dispatch(_ exchanges: [HTTP2Exchange], to handler: NIOLoopBoundBox<HTTP2ConnectionHandler>) {
        handler.eventLoop.execute { handler.value.enqueue(exchanges) }
    }

    // MARK: - Connections

    /// Makes a handler and starts connecting it, after a delay when earlier attempts failed.
    private func makeSlot(failures: Int, previousError: TransportError?) -> Slot {
        let eventLoop = self.group.next()
        let handler = HTTP2ConnectionHandler(
            eventLoop: eventLoop,
            previousError: previousError,
            authorization: self.authorization,
            settings: self.settings,
            events: HTTP2ConnectionHandler.Events(
                draining: { [self] handler, retry in self.replace(handler, retry: retry, error: nil) },
                closed: { [self] handler, retry, error in self.replace(handler, retry: retry, error: error) },
                retry: { [self] exchanges in self.resend(exchanges) },
                saturated: { [self] in self.grow() }
            )
        )
        let identity = ObjectIdentifier(handler)
        let bound = NIOLoopBoundBox.makeBoxSendingValue(handler, eventLoop: eventLoop)
        let delay = failures == 0 ? TimeAmount.zero : Self.backoff(failures: failures)
        eventLoop.execute {
            bound.value.start()
            eventLoop.scheduleTask(in: delay) { self.connect(bound) }
        }
        return Slot(handler: bound, identity: identity, failures: failures, channel: nil)
    }

    private func connect(_ handler: NIOLoopBoundBox<HTTP2ConnectionHandler>) {
        let tls = self.tls
        let serverHostname = self.serverHostname
        ClientBootstrap(group: handler.eventLoop)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverHostname))
                    try channel.pipeline.syncOperations.addHandler(handler.value)
                }
            }
            .connect(host: self.endpoint.host, port: self.endpoint.port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    self.state.withLockedValue { state in
                        if let index = state.slots.firstIndex(where: { $0.identity == ObjectIdentifier(handler.value) }) {
                            state.slots[index].channel = channel
                        }
                    }
                case .failure(let error):
                    handler.value.abandon(TransportError(.connectionFailed, "\(self.endpoint.host):\(self.endpoint.port): \(error)"))
                }
            }
    }

    /// Puts a new connection in a finished one's place and hands it the exchanges to send again. A connection
    /// already replaced (it drained after GOAWAY, then closed) hands its last exchanges to the pool's current
    /// connections.
    private func replace(_ handler: HTTP2ConnectionHandler, retry exchanges: [HTTP2Exchange], error: TransportError?) {
        let identity = ObjectIdentifier(handler)
        let (replacement, isShutDown): (NIOLoopBoundBox<HTTP2ConnectionHandler>?, Bool) = self.state.withLockedValue { state in
            guard !state.isShutDown else { return (nil, true) }
            guard let index = state.slots.firstIndex(where: { $0.identity == identity }) else { return (nil, false) }
            let connected = state.slots[index].channel != nil && error?.code != .connectionFailed
            let failures = connected ? 0 : state.slots[index].failures + 1
            state.slots[index] = self.makeSlot(failures: failures, previousError: error)
            return (state.slots[index].handler, false)
        }
        if let error {
            self.logger.debug(
                "APNs connection closed",
                metadata: ["apns.endpoint": "\(self.endpoint.host):\(self.endpoint.port)", "error": "\(error)"]
            )
        }
        guard !exchanges.isEmpty else { return }
        if isShutDown {
            for exchange in exchanges { exchange.complete(.failure(TransportError(.shutdown, "the APNs client was shut down"))) }
            return
        }
        for exchange in exchanges { exchange.resetForRetry() }
        if let replacement {
            Self.dispatch(exchanges, to: replacement)
        } else {
            self.submit(exchanges)
        }
    }

    /// 100 ms doubling per failure up to 5 s, with ±25 % jitter.
    private static func backoff(failures: Int) -> TimeAmount {
        let base = min(100.0 * pow(2.0, Double(min(failures - 1, 10))), 5000.0)
        return .milliseconds(Int64(base * Double.random(in: 0.75...1.25)))
    }
}
