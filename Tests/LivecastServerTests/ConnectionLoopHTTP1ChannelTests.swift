import Hummingbird
import HummingbirdTesting
import LivecastStore
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Testing

@testable import LivecastServer

/// A request's work runs on its connection's event loop, where the connection is read and written, and comes back
/// there after each wait, even when what it waited for finished on another loop (as a database answer does).
@Suite struct ConnectionLoopHTTP1ChannelTests {
    /// Serves `GET /where`, which says whether it started on its connection's loop and, after waiting for work on
    /// another loop, came back to it.
    /// - Parameters:
    ///   - onConnectionLoops: The server handles each connection on its loop (``ConnectionLoopHTTP1Channel``).
    ///   - guarded: The request's work runs as a route's does, in the task `DatabaseWatch.guarding` makes.
    private func answers(onConnectionLoops: Bool, guarded: Bool = false) async throws -> [String] {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let router = Router(context: APIRequestContext.self)
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
        let application = Application(
            router: router,
            server: onConnectionLoops ? .http1(configuration: .init(), executors: EventLoopExecutors(group: group)) : .http1(),
            eventLoopGroupProvider: .shared(group)
        )
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

    @Test func aRequestRunsOnItsConnectionsLoop() async throws {
        #expect(Set(try await self.answers(onConnectionLoops: true)) == ["connection loop"])
    }

    @Test func aRoutesGuardedWorkRunsOnItsConnectionsLoopToo() async throws {
        #expect(Set(try await self.answers(onConnectionLoops: true, guarded: true)) == ["connection loop"])
    }

    @Test func otherwiseItRunsElsewhere() async throws {
        // What the channel is for: Swift concurrency's executor runs the request and resumes it wherever it likes.
        #expect(try await self.answers(onConnectionLoops: false).contains("elsewhere"))
    }
}
