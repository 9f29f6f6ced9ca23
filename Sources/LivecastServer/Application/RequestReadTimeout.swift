import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request has not fully arrived within a time of its head, however slowly its body
/// keeps trickling in. (Hummingbird's idle timeout closes a connection on which nothing arrives for a while,
/// a half-sent head included; this bounds a body sent a byte at a time.)
final class RequestReadTimeout: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    /// - Parameter timeout: How long a request may take to arrive, from its head to its end.
    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head:
            self.deadline?.cancel()
            let channel = context.channel
            self.deadline = context.eventLoop.assumeIsolated().scheduleTask(in: self.timeout) {
                channel.close(promise: nil)
            }
        case .end:
            self.deadline?.cancel()
            self.deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.deadline?.cancel()
        self.deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.deadline?.cancel()
        self.deadline = nil
    }
}
