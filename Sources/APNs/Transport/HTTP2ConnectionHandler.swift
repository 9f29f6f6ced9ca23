import NIOCore
import NIOSSL
import NIOTLS

/// One HTTP/2 connection, on one event loop: feeds what happens on the channel and in the nghttp2 session into an
/// ``HTTP2ConnectionStateMachine`` and performs the actions it returns.
///
/// Requests arrive in batches from the pool; as many as the server's `MAX_CONCURRENT_STREAMS` allows are submitted,
/// and every frame nghttp2 has ready goes out in one buffer, flushed once per batch or read burst. No task or
/// promise per request.
final class HTTP2ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What the handler tells its pool.
    struct Events {
        /// The connection takes no new work (GOAWAY); `retry` never reached the server.
        var draining: (HTTP2ConnectionHandler, [HTTP2Exchange]) -> Void
        /// The connection closed; `retry` are to be sent again, `error` says why it ended.
        var closed: (HTTP2ConnectionHandler, [HTTP2Exchange], TransportError) -> Void
        /// Exchanges the server did not process, to send again elsewhere.
        var retry: ([HTTP2Exchange]) -> Void
        /// Every stream the server allows is busy and exchanges wait (``HTTP2ConnectionStateMachine/isSaturated``).
        var saturated: () -> Void
    }

    let eventLoop: any EventLoop
    private let events: Events
    private let authorization: any HTTP2Authorization
    private var stateMachine: HTTP2ConnectionStateMachine
    private var context: ChannelHandlerContext?
    private var session: NGHTTP2Session?
    /// The stream whose header block is being read, so that a block is looked up once.
    private var headerStream: (id: Int32, exchange: HTTP2Exchange)?
    private var sweepTask: RepeatedTask?

    /// - Parameter previousError: Why the connection this one replaces ended, reported if requests time out
    ///   before this one connects.
    init(
        eventLoop: any EventLoop,
        previousError: TransportError?,
        authorization: any HTTP2Authorization,
        settings: TransportSettings,
        events: Events
    ) {
        self.eventLoop = eventLoop
        self.stateMachine = HTTP2ConnectionStateMachine(previousError: previousError, settings: settings)
        self.authorization = authorization
        self.events = events
    }

    // MARK: - Work from the pool (on the event loop)

    /// Starts the deadline and keep-alive sweep. Call once, on the event loop.
    func start() {
        let handler = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.sweepTask = self.eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) { _ in
            handler.value.sweep()
        }
    }

    /// Takes exchanges to send; they wait while the connection is being made.
    func enqueue(_ exchanges: [HTTP2Exchange]) {
        self.perform(self.stateMachine.enqueue(exchanges))
    }

    /// Gives up on a connection that could not be made.
    func abandon(_ error: TransportError) {
        self.perform(self.stateMachine.connectionClosed(error: error))
    }

    /// Closes the connection; what is unanswered goes back to the pool.
    func close() {
        if self.context != nil {
            self.perform(self.stateMachine.closeRequested())
        } else {
            self.perform(self.stateMachine.connectionClosed(error: nil))
        }
    }

    // MARK: - Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            self.perform(self.stateMachine.tlsHandshakeCompleted(negotiatedProtocol: negotiated, now: .now()))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session = self.session else { return }
        self.stateMachine.bytesReceived(now: .now())
        do {
            try session.receive(self.unwrapInboundIn(data))
        } catch {
            self.perform(self.stateMachine.sessionFailed(error))
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.pump()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.perform(self.stateMachine.connectionClosed(error: nil))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.perform(self.stateMachine.errorCaught(String(describing: error)))
    }

    // MARK: - Actions

    private func perform(_ action: HTTP2ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .startSession:
            self.session = NGHTTP2Session(delegate: self)
            self.pump()
        case .pump:
            self.pump()
        case .sendPing:
            self.session?.ping()
        case .close:
            self.context?.close(promise: nil)
        case .succeed(let exchange):
            exchange.completeWithResponse()
        case .fail(let exchange, let error):
            exchange.complete(.failure(error))
        case .retry(let exchanges):
            self.events.retry(exchanges)
        case .drain(let retry):
            self.events.draining(self, retry)
        case .finish(let retry, let fail, let error):
            self.sweepTask?.cancel()
            self.sweepTask = nil
            self.headerStream = nil
            self.session = nil
            for exchange in fail { exchange.complete(.failure(error)) }
            self.events.closed(self, retry, error)
        }
    }

    /// Submits what the stream limit allows, then writes everything nghttp2 has ready in one flush.
    private func pump() {
        guard let session = self.session, let context = self.context else { return }
        var authorization: String?
        while true {
            guard let streamID = session.nextStreamID else {
                self.perform(self.stateMachine.streamIDsExhausted())
                break
            }
            guard let exchange = self.stateMachine.admitNext(as: streamID) else {
                if self.stateMachine.isSaturated { self.events.saturated() }
                break
            }
            let value = authorization ?? self.authorization.headerValue()
            authorization = value
            switch session.submitRequest(exchange, authorization: value) {
            case .submitted(let submittedID):
                assert(submittedID == streamID, "nghttp2 gave stream \(submittedID), not \(streamID)")
                exchange.attempts += 1
                exchange.sentAt = .now()
                exchange.authorization = value
            case .headersTooLarge:
                self.perform(self.stateMachine.submissionFailed(streamID: streamID, .headersTooLarge))
            case .refused:
                self.perform(self.stateMachine.submissionFailed(streamID: streamID, .refusedBySession))
            }
        }
        do {
            if let output = try session.collectOutput(allocator: context.channel.allocator) {
                context.writeAndFlush(self.wrapOutboundOut(output), promise: nil)
            }
        } catch {
            return self.perform(self.stateMachine.sessionFailed(error))
        }
        self.perform(self.stateMachine.outputFlushed(sessionIsDone: session.isDone))
    }

    /// Every 100 ms: fails what is past its deadline, keeps the connection alive, and sends what waits.
    private func sweep() {
        let now = NIODeadline.now()
        let expired = self.stateMachine.expireDeadlines(now: now)
        for streamID in expired.cancelledStreams {
            if self.headerStream?.id == streamID { self.headerStream = nil }
            self.session?.cancelStream(streamID)
        }
        for (exchange, error) in expired.failures {
            exchange.complete(.failure(error))
        }
        let keepAlive = self.stateMachine.keepAliveTick(now: now)
        self.perform(keepAlive)
        if case .close = keepAlive { return }
        self.pump()
    }
}

extension HTTP2ConnectionHandler: NGHTTP2SessionDelegate {
    func sessionReceivedSettings(maxConcurrentStreams: Int) {
        self.stateMachine.settingsReceived(maxConcurrentStreams: maxConcurrentStreams)
    }

    func sessionReceivedHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, streamID: Int32) {
        if self.headerStream?.id != streamID {
            guard let exchange = self.stateMachine.exchange(onStream: streamID) else { return }
            self.headerStream = (streamID, exchange)
        }
        self.headerStream!.exchange.receiveHeader(name: name, value: value)
    }

    func sessionReceivedData(_ bytes: UnsafeBufferPointer<UInt8>, streamID: Int32) {
        self.stateMachine.exchange(onStream: streamID)?.receiveData(bytes)
    }

    func sessionReceivedEndOfStream(streamID: Int32) {
        self.stateMachine.responseEnded(streamID: streamID)
    }

    func sessionReceivedGoAway(lastStreamID: Int32, errorCode: UInt32, debugData: String) {
        // Streams above the last id leave this connection now.
        self.headerStream = nil
        self.perform(self.stateMachine.goAwayReceived(lastStreamID: lastStreamID, errorCode: errorCode, debugData: debugData))
    }

    func sessionClosedStream(streamID: Int32, errorCode: UInt32) {
        if self.headerStream?.id == streamID { self.headerStream = nil }
        self.perform(self.stateMachine.streamClosed(streamID, errorCode: errorCode))
    }

    func sessionReadBody(streamID: Int32, into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool) {
        guard let exchange = self.stateMachine.exchange(onStream: streamID) else { return (0, true) }
        return exchange.readBody(into: buffer)
    }
}
