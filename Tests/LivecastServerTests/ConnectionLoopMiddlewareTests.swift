import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

@testable import LivecastServer

/// A request's work comes back to its connection's event loop after each wait, where the connection is read and
/// written, even when what it waited for finished on another loop (as a database answer does).
@Suite struct ConnectionLoopMiddlewareTests {
    /// Serves `GET /where`, which waits for work on a loop other than its connection's, then says where it resumed.
    /// - Parameter guarded: The request's work runs as a route's does, in the task `DatabaseWatch.guarding` makes.
    private func answers(loopMiddleware: Bool, guarded: Bool = false) async throws -> [String] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let router = Router(context: APIRequestContext.self)
        if loopMiddleware { router.add(middleware: ConnectionLoopMiddleware(executors: EventLoopExecutors(group: group))) }
        // Never run, so never connected: guarding only needs the database not yet known to be unreachable.
        let watch = DatabaseWatch(
            database: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable),
            logger: Logger(label: "test")
        )
        router.get("/where") { _, context -> String in
            let work: @Sendable () async throws -> String = {
                let startedThere = context.eventLoop.inEventLoop
                let other = group.makeIterator().first { $0 !== context.eventLoop }!
                try await other.submit {}.get()
                return startedThere && context.eventLoop.inEventLoop ? "connection loop" : "elsewhere"
            }
            return guarded ? try await watch.guarding(work) : try await work()
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

    @Test func aRoutesGuardedWorkRunsOnItsConnectionsLoopToo() async throws {
        #expect(Set(try await self.answers(loopMiddleware: true, guarded: true)) == ["connection loop"])
    }

    @Test func withoutTheMiddlewareItResumesElsewhere() async throws {
        // What the middleware is for: Swift concurrency's executor resumes the request where the awaited work ended.
        #expect(try await self.answers(loopMiddleware: false).contains("elsewhere"))
    }
}
