import NIOCore
import NIOPosix
import Testing

@testable import LivecastServer

/// PostgreSQL's connections are handed every loop in turn, even when the pool asks from one of them (NIO's own group
/// answers with the loop it is asked on).
@Suite struct SpreadEventLoopsTests {
    @Test func aCallerOnALoopIsHandedEveryLoopInTurn() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let spread = SpreadEventLoops(base: group)
        let home = group.next()
        let (sticky, handedOut) = try await home.submit {
            (group.any() === home, (0..<4).map { _ in ObjectIdentifier(spread.any()) })
        }.get()
        #expect(sticky, "NIO's group no longer answers with the caller's loop: SpreadEventLoops may not be needed")
        #expect(Set(handedOut).count == 2, "every loop is handed out")
        try await group.shutdownGracefully()
    }
}
