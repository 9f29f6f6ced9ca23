import NIOCore
import NIOHPACK
import NIOHTTP2

/// Serves one HTTP/2 connection frame by frame, on its event loop: collects each stream's request, answers it
/// at once, and flushes once per read burst. No task or child channel per stream, so the emulator keeps up
/// with load generators.
///
/// It also plays APNs' connection rules: `MAX_CONCURRENT_STREAMS` raised after the first authenticated request,
/// GOAWAY with a JSON reason, and dropped connections.
final class EmulatorConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// A request still arriving.
    private struct PendingRequest {
        var headers: HPACKHeaders
        var body: ByteBuffer
        var unacknowledgedBytes = 0
    }

    /// Bodies are kept up to this size, well above APNs' limits, so a larger one is still answered `413`.
    private static let bodyLimit = 64 * 1024
    /// Flow-control credit is returned once this much has been consumed.
    private static let windowUpdateThreshold = 32 * 1024

    private let responder: EmulatorResponder
    private let registry: ConnectionRegistry
    private let maximumConcurrentStreams: Int
    private var authentication = ConnectionAuthentication()
    private var pending: [HTTP2StreamID: PendingRequest] = [:]
    private var highestAnsweredStream = HTTP2StreamID.rootStream
    private var unacknowledgedConnectionBytes = 0
    private var isGoingAway = false

    init(responder: EmulatorResponder, registry: ConnectionRegistry, maximumConcurrentStreams: Int) {
        self.responder = responder
        self.registry = registry
        self.maximumConcurrentStreams = maximumConcurrentStreams
    }

    func channelActive(context: ChannelHandlerContext) {
        self.registry.add(context.channel)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.registry.remove(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let headers):
            if self.pending[frame.streamID] == nil {
                self.pending[frame.streamID] = PendingRequest(headers: headers.headers, body: context.channel.allocator.buffer(capacity: 0))
            }
            if headers.endStream { self.answer(frame.streamID, context: context) }
        case .data(let payload):
            self.receive(payload, on: frame.streamID, context: context)
        case .rstStream:
            self.pending[frame.streamID] = nil
        case .ping(_, ack: false):
            // NIO answers the PING itself; the emulator only counts it.
            self.responder.state.receivedPings.add(1, ordering: .relaxed)
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        context.fireChannelReadComplete()
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let command = event as? ConnectionRegistry.Command else {
            return context.triggerUserOutboundEvent(event, promise: promise)
        }
        switch command {
        case .goAway(let reason): self.goAway(reason: reason, context: context)
        case .drop: context.close(promise: nil)
        }
        promise?.succeed()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Protocol and TLS errors end the connection, as they would at APNs.
        context.close(promise: nil)
    }

    private func receive(_ payload: HTTP2Frame.FramePayload.Data, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard case .byteBuffer(var bytes) = payload.data else { return }
        let consumed = bytes.readableBytes + (payload.paddingBytes.map { $0 + 1 } ?? 0)
        self.unacknowledgedConnectionBytes += consumed
        if self.unacknowledgedConnectionBytes >= Self.windowUpdateThreshold {
            self.sendWindowUpdate(.rootStream, self.unacknowledgedConnectionBytes, context: context)
            self.unacknowledgedConnectionBytes = 0
        }
        guard var request = self.pending[streamID] else { return }
        if request.body.readableBytes < Self.bodyLimit {
            request.body.writeBuffer(&bytes)
        }
        if payload.endStream {
            self.pending[streamID] = request
            return self.answer(streamID, context: context)
        }
        request.unacknowledgedBytes += consumed
        if request.unacknowledgedBytes >= Self.windowUpdateThreshold {
            self.sendWindowUpdate(streamID, request.unacknowledgedBytes, context: context)
            request.unacknowledgedBytes = 0
        }
        self.pending[streamID] = request
    }

    private func answer(_ streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        guard let request = self.pending.removeValue(forKey: streamID), !self.isGoingAway else { return }
        let response = self.responder.respond(
            to: EmulatorRequest(headers: request.headers, body: request.body),
            authentication: &self.authentication,
            connection: ObjectIdentifier(context.channel)
        )
        switch response.connectionAction {
        case .goAway(let reason):
            return self.goAway(reason: reason, context: context)
        case .drop:
            return context.close(promise: nil)
        case .raiseStreamLimit:
            let settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: self.maximumConcurrentStreams)]
            context.write(self.wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: nil)
        case .none:
            break
        }
        self.write(response, on: streamID, context: context)
        self.highestAnsweredStream = max(self.highestAnsweredStream, streamID)
    }

    private func write(_ response: EmulatorResponse, on streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        var headers = HPACKHeaders()
        headers.reserveCapacity(response.headers.count + 1)
        headers.add(name: ":status", value: String(response.status))
        for (name, value) in response.headers {
            headers.add(name: name, value: value)
        }
        let hasBody = response.body.readableBytes > 0
        let headersFrame = HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: !hasBody)))
        context.write(self.wrapOutboundOut(headersFrame), promise: nil)
        if hasBody {
            let dataFrame = HTTP2Frame(streamID: streamID, payload: .data(.init(data: .byteBuffer(response.body), endStream: true)))
            context.write(self.wrapOutboundOut(dataFrame), promise: nil)
        }
    }

    /// Sends GOAWAY naming the last stream answered, with `{"reason": …}`, and closes shortly after so the
    /// peer reads it. Requests not answered yet were not processed and may be retried elsewhere.
    private func goAway(reason: String, context: ChannelHandlerContext) {
        guard !self.isGoingAway else { return }
        self.isGoingAway = true
        self.pending.removeAll()
        let debugData = context.channel.allocator.buffer(string: #"{"reason":"\#(reason)"}"#)
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: self.highestAnsweredStream, errorCode: .noError, opaqueData: debugData)
        )
        context.writeAndFlush(self.wrapOutboundOut(frame), promise: nil)
        let channel = context.channel
        context.eventLoop.scheduleTask(in: .milliseconds(200)) { channel.close(promise: nil) }
    }

    private func sendWindowUpdate(_ streamID: HTTP2StreamID, _ increment: Int, context: ChannelHandlerContext) {
        context.write(self.wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: increment))), promise: nil)
    }
}
