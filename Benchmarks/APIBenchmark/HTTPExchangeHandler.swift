import NIOCore
import NIOHTTP1

/// One keep-alive HTTP/1.1 connection's exchanges, one at a time (no pipelining): writes a request and hands its
/// answer to the callback given with it. Used on its channel's event loop only.
final class HTTPExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let headers: HTTPHeaders
    private var context: ChannelHandlerContext?
    private var pending: ((APIAnswer) -> Void)?
    private var status = 0
    private var body = ByteBuffer()

    /// Whether the connection is open and has no request in flight.
    var isIdle: Bool { self.context != nil && self.pending == nil }

    /// - Parameter headers: Sent with every request (host, authorization, content type).
    init(headers: HTTPHeaders) {
        self.headers = headers
    }

    /// Sends `request`; `onAnswer` gets the answer, or a status-0 answer if the connection closes first.
    /// - Precondition: ``isIdle``.
    func send(_ request: APIRequest, onAnswer: @escaping (APIAnswer) -> Void) {
        guard let context = self.context else {
            onAnswer(APIAnswer(status: 0, body: "connection closed", receivedAt: .now()))
            return
        }
        precondition(self.pending == nil, "one request at a time on a connection")
        self.pending = onAnswer
        var headers = self.headers
        headers.add(name: "content-length", value: String(request.body?.readableBytes ?? 0))
        headers.add(contentsOf: request.headers)
        let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: request.path, headers: headers)
        context.write(self.wrapOutboundOut(.head(head)), promise: nil)
        if let body = request.body {
            context.write(self.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head(let head):
            self.status = Int(head.status.code)
            self.body.clear()
        case .body(var part):
            self.body.writeBuffer(&part)
        case .end:
            let answer = APIAnswer(status: self.status, body: String(buffer: self.body), receivedAt: .now())
            self.finish(answer)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.context = nil
        self.finish(APIAnswer(status: 0, body: "the server closed the connection", receivedAt: .now()))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func finish(_ answer: APIAnswer) {
        guard let pending = self.pending else { return }
        self.pending = nil
        pending(answer)
    }
}
