import CNGHTTP2
import NIOCore
import Synchronization

/// Serves one HTTP/2 connection on its event loop, framed by libnghttp2 (``NGHTTP2ServerSession``): collects each
/// stream's request, answers it at once, and writes everything nghttp2 has ready in one flush per read burst. No
/// task or child channel per stream, so the emulator keeps up with load generators.
///
/// It also plays APNs' connection rules: `MAX_CONCURRENT_STREAMS` of 1 until the first authenticated request,
/// then the configured value; GOAWAY with a JSON reason; dropped connections.
final class EmulatorConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// A request still arriving.
    private struct PendingRequest {
        var method = ""
        var target = ""
        var headers: [EmulatorRequest.Header] = []
        var body = ByteBuffer()
    }

    /// Bodies are kept up to this size, well above APNs' limits, so a larger one is still answered `413`.
    private static let bodyLimit = 64 * 1024

    /// APNs' observed initial SETTINGS (APNS-REFERENCE §5.1), with the configured stream limit; the client is
    /// shown 1 (see ``channelActive(context:)``).
    private static func initialSettings(maximumConcurrentStreams: UInt32) -> [nghttp2_settings_entry] {
        [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue), value: 4096),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: maximumConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 65535),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_FRAME_SIZE.rawValue), value: 16384),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: 8000),
        ]
    }

    /// Whether the connection is ending. Requests are answered only while it is `.open`.
    private enum Closing {
        case open
        /// GOAWAY sent: the connection closes shortly, so the peer reads it first.
        case afterGoAway
        /// Closed at once (or as soon as the session is no longer inside a callback).
        case now
    }

    private let responder: EmulatorResponder
    private let registry: ConnectionRegistry
    /// The stream limit after the first authenticated request; a control-plane limit replaces it.
    private var maximumConcurrentStreams: UInt32
    private let latency: EmulatorLatency
    private var session: NGHTTP2ServerSession?
    private var context: ChannelHandlerContext?
    private var authentication = ConnectionAuthentication()
    /// The request whose header block is being read: a block's frames are never interleaved with others.
    private var headerBlock: (streamID: Int32, request: PendingRequest)?
    /// Requests whose header block is complete, waiting for the end of their body.
    private var pending: [Int32: PendingRequest] = [:]
    /// The highest stream whose request was processed (answered, or its answer waiting out the latency): GOAWAY
    /// names it, so the client retries only what was not.
    private var highestAnsweredStream: Int32 = 0
    private var closing = Closing.open

    init(responder: EmulatorResponder, registry: ConnectionRegistry, maximumConcurrentStreams: Int, latency: EmulatorLatency = .none) {
        self.responder = responder
        self.registry = registry
        self.maximumConcurrentStreams = UInt32(clamping: maximumConcurrentStreams)
        self.latency = latency
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let settings = Self.initialSettings(maximumConcurrentStreams: self.maximumConcurrentStreams)
        self.session = NGHTTP2ServerSession(delegate: self, settings: settings)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.session = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        self.registry.add(context.channel)
        // The server's SETTINGS, telling the client one stream until its first authenticated request. nghttp2 holds
        // the configured limit, so the streams a client opens before it has read the frame are served rather than
        // refused (REFUSED_STREAM), as NIO's HTTP/2 stack served them; TLS holds the frame until the handshake is done.
        if let session = self.session, var settings = try? session.collectOutput(allocator: context.channel.allocator) {
            NGHTTP2ServerSession.showStreamLimit(1, inSettingsAtStartOf: &settings)
            context.writeAndFlush(self.wrapOutboundOut(settings), promise: nil)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.registry.remove(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let session = self.session, self.closing != .now else { return }
        do {
            try session.receive(self.unwrapInboundIn(data))
        } catch {
            // A fault nghttp2 cannot answer with GOAWAY (not HTTP/2, flooding): end the connection.
            self.closing = .now
        }
        if self.closing == .now { self.closeNow() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.flushSession()
        context.fireChannelReadComplete()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let command = event as? ConnectionRegistry.Command else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        switch command {
        case .goAway(let reason):
            self.goAway(reason: reason)
            self.flushSession()
        case .drop:
            self.closeNow()
        case .limitStreams(let limit):
            self.maximumConcurrentStreams = UInt32(clamping: limit)
            if let session = self.session, self.closing == .open {
                session.submitSettings([
                    nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: self.maximumConcurrentStreams)
                ])
                self.flushSession()
            }
        }
        promise?.succeed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // TLS errors end the connection, as they would at APNs.
        self.closeNow()
    }

    /// Writes every frame nghttp2 has ready in one flush, then closes the connection if it is done.
    private func flushSession() {
        guard let session = self.session, let context = self.context, self.closing != .now else { return }
        do {
            if let output = try session.collectOutput(allocator: context.channel.allocator) {
                context.writeAndFlush(self.wrapOutboundOut(output), promise: nil)
            }
        } catch {
            return self.closeNow()
        }
        switch self.closing {
        case .afterGoAway:
            return
        case .now:
            return self.closeNow()
        case .open:
            // Both sides are finished: the client's GOAWAY, or ours after a protocol error, with no stream left.
            if session.isDone { self.closeNow() }
        }
    }

    /// Ends the connection at once. What nghttp2 holds ready goes out first: the answers to requests read before the
    /// one that ended it were made and logged, so they reach the client, as a server's earlier answers would.
    private func closeNow() {
        if let session = self.session, let context = self.context,
            let output = try? session.collectOutput(allocator: context.channel.allocator)
        {
            context.writeAndFlush(self.wrapOutboundOut(output), promise: nil)
        }
        self.closing = .now
        self.session = nil
        self.context?.close(promise: nil)
    }

    /// Answers a complete request, inside the session's receive.
    private func answer(_ request: PendingRequest, on streamID: Int32) {
        guard self.closing == .open, let session = self.session, let context = self.context else { return }
        let response = self.responder.respond(
            to: EmulatorRequest(method: request.method, target: request.target, headers: request.headers, body: request.body),
            authentication: &self.authentication,
            connection: ObjectIdentifier(context.channel)
        )
        switch response.connectionAction {
        case .goAway(let reason):
            return self.goAway(reason: reason)
        case .drop:
            // Closed once nghttp2 returns.
            self.closing = .now
            return
        case .raiseStreamLimit:
            let limit = self.maximumConcurrentStreams
            session.submitSettings([nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limit)])
        case .none:
            break
        }
        self.highestAnsweredStream = max(self.highestAnsweredStream, streamID)
        let delay = request.target.hasPrefix("/emulator") ? .zero : self.latency.draw()
        guard delay > .zero else {
            return session.submitResponse(streamID: streamID, status: response.status, headers: response.headers, body: response.body)
        }
        let later = NIOLoopBound((handler: self, response: response), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(
            in: .nanoseconds(Int64(delay.components.seconds) * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        ) {
            later.value.handler.answerLater(later.value.response, on: streamID)
        }
    }

    /// Sends an answer that waited out the latency, unless the connection closed meanwhile (after our GOAWAY it still
    /// goes: its request was processed); then the wire log no longer counts it as answered.
    private func answerLater(_ response: EmulatorResponse, on streamID: Int32) {
        guard self.closing != .now, let session = self.session else {
            self.responder.answerLost(response)
            return
        }
        session.submitResponse(streamID: streamID, status: response.status, headers: response.headers, body: response.body)
        self.flushSession()
    }

    /// Queues GOAWAY naming the last stream answered, with `{"reason": …}`, and closes shortly after so the
    /// peer reads it. Requests not answered yet were not processed and may be retried elsewhere.
    private func goAway(reason: String) {
        guard self.closing == .open, let session = self.session, let context = self.context else { return }
        self.closing = .afterGoAway
        self.headerBlock = nil
        self.pending.removeAll()
        session.submitGoAway(lastStreamID: self.highestAnsweredStream, debugData: #"{"reason":"\#(reason)"}"#)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: .milliseconds(200)) { channel.close(promise: nil) }
    }
}

extension EmulatorConnectionHandler: NGHTTP2ServerSessionDelegate {
    func sessionBeganRequest(streamID: Int32) {
        guard self.closing == .open else { return }
        var request = PendingRequest()
        request.headers.reserveCapacity(8)
        self.headerBlock = (streamID, request)
    }

    func sessionReceivedHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, streamID: Int32) {
        guard self.headerBlock?.streamID == streamID else { return }
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":method".utf8) {
                self.headerBlock!.request.method = String(decoding: value, as: UTF8.self)
            } else if name.elementsEqual(":path".utf8) {
                self.headerBlock!.request.target = String(decoding: value, as: UTF8.self)
            }
        } else {
            self.headerBlock!.request.headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    func sessionReceivedHeaderBlock(streamID: Int32) {
        guard self.headerBlock?.streamID == streamID, let (_, request) = self.headerBlock.take() else { return }
        self.pending[streamID] = request
    }

    func sessionReceivedData(_ bytes: UnsafeBufferPointer<UInt8>, streamID: Int32) {
        guard let index = self.pending.index(forKey: streamID), self.pending.values[index].body.readableBytes < Self.bodyLimit
        else { return }
        self.pending.values[index].body.writeBytes(UnsafeRawBufferPointer(bytes))
    }

    func sessionReceivedEndOfStream(streamID: Int32) {
        guard let request = self.pending.removeValue(forKey: streamID) else { return }
        self.answer(request, on: streamID)
    }

    func sessionReceivedPing() {
        // nghttp2 answers the PING itself; the emulator only counts it.
        self.responder.state.receivedPings.add(1, ordering: .relaxed)
    }

    func sessionClosedStream(streamID: Int32) {
        if self.headerBlock?.streamID == streamID { self.headerBlock = nil }
        self.pending[streamID] = nil
    }
}
