import NIOCore
import NIOHTTP1
import NIOPosix

/// A pool of keep-alive HTTP/1.1 connections to the Livecast API, all on one event loop, authenticated with one API
/// key: sends requests one by one (``send(_:)``) or as a load (``openLoop(rate:duration:request:)``,
/// ``closedLoop(requests:duration:request:)``).
final class APIClient: Sendable {
    /// The loop every connection, timer and callback of the client runs on.
    let eventLoop: any EventLoop
    /// The connections' handlers, in the order they were opened.
    let connections: NIOLoopBound<[HTTPExchangeHandler]>
    private let channels: [any Channel]

    private init(eventLoop: any EventLoop, connections: NIOLoopBound<[HTTPExchangeHandler]>, channels: [any Channel]) {
        self.eventLoop = eventLoop
        self.connections = connections
        self.channels = channels
    }

    /// Opens `count` connections to `host:port`.
    /// - Parameters:
    ///   - apiKey: Sent as `Authorization: Bearer …` with every request.
    ///   - eventLoop: The loop to run on.
    static func connect(host: String, port: Int, count: Int, apiKey: String, on eventLoop: any EventLoop) async throws -> APIClient {
        let headers = HTTPHeaders([
            ("host", "\(host):\(port)"),
            ("authorization", "Bearer \(apiKey)"),
            ("content-type", "application/json"),
        ])
        var channels: [any Channel] = []
        do {
            for _ in 0..<count {
                let channel = try await ClientBootstrap(group: eventLoop)
                    .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHTTPClientHandlers()
                            try channel.pipeline.syncOperations.addHandler(HTTPExchangeHandler(headers: headers))
                        }
                    }
                    .connect(host: host, port: port)
                    .get()
                channels.append(channel)
            }
        } catch {
            for channel in channels { try? await channel.close() }
            throw error
        }
        let opened = channels
        let handlers = try await eventLoop.submit {
            NIOLoopBound(try opened.map { try $0.pipeline.syncOperations.handler(type: HTTPExchangeHandler.self) }, eventLoop: eventLoop)
        }.get()
        return APIClient(eventLoop: eventLoop, connections: handlers, channels: opened)
    }

    /// Sends one request on the first connection and waits for its answer. Not to be mixed with a load running.
    func send(_ request: APIRequest) async throws -> APIAnswer {
        let promise = self.eventLoop.makePromise(of: APIAnswer.self)
        self.eventLoop.execute {
            self.connections.value[0].send(request) { promise.succeed($0) }
        }
        return try await promise.futureResult.get()
    }

    /// Closes every connection.
    func close() async {
        for channel in self.channels { try? await channel.close() }
    }
}
