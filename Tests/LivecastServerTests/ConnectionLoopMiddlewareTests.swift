import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOPosix
import Testing

@testable import LivecastServer

/// A request's work comes back to its connection's event loop after each wait, where the connection is read and
/// written, even when what it waited for finished on another loop (as a database answer does).
@Suite struct ConnectionLoopMiddlewareTests {
    /// Serves `GET /where`, which waits for work on a loop other than its connection's, then says where it resumed.
    private func answers(loopMiddleware: Bool) async throws -> [String] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let router = Router(context: APIRequestContext.self)
        if loopMiddleware { router.add(middleware: ConnectionLoopMiddleware(executors: EventLoopExecutors(group: group))) }
        router.get("/where") { _, context -> String in
            let other = group.makeIterator().first { $0 !== context.eventLoop }!
            try await other.submit {}.get()
            return context.eventLoop.inEventLoop ? "connection loop" : "elsewhere"
        }
        let application = Application(router: router, eventLoopGroupProvider: .shared(group))
        let answers = try await application.test(.live) { client in
            var answers: [String] = []
            for _ in 0..<20 {
                answers.append(try await client.execute(uri: "/where", method: .get) { String(buffer: $0.body) })
            }
            return answers
        }
        try await group.shutdownGracefully()
        return answers
    }

    @Test func aRequestResumesOnItsConnectionsLoop() async throws {
        #expect(Set(try await self.answers(loopMiddleware: true)) == ["connection loop"])
    }

    @Test func withoutTheMiddlewareItResumesElsewhere() async throws {
        // What the middleware is for: Swift concurrency's executor resumes the request where the awaited work ended.
        #expect(try await self.answers(loopMiddleware: false).contains("elsewhere"))
    }
}
