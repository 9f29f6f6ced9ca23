import Hummingbird
import HummingbirdCore
import LivecastStore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 connection, handled with its channel's event loop as the task executor preference
/// (``EventLoopExecutors``): reading each request, every step of its handling and writing its response run on the
/// thread that reads and writes the connection, instead of hopping between it and another loop at each.
struct ConnectionLoopHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http1: HTTP1Channel
    let executors: EventLoopExecutors

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        self.http1.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(self.executors.executor(for: value.channel.eventLoop)) {
            await self.http1.handle(value: value, logger: logger)
        }
    }
}

extension HTTPServerBuilder {
    /// An HTTP/1.1 server whose connections are each handled on their own event loop (``ConnectionLoopHTTP1Channel``).
    /// - Parameter executors: The executors of the loops the server's connections are on.
    static func http1(configuration: HTTP1Channel.Configuration, executors: EventLoopExecutors) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            ConnectionLoopHTTP1Channel(http1: HTTP1Channel(responder: responder, configuration: configuration), executors: executors)
        }
    }
}
