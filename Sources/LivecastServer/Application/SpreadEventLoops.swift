import Dispatch
import NIOCore

/// An event loop group that hands out its loops in turn, even to a caller already on one of them.
///
/// NIO's own group is sticky: `any()` called on one of its loops returns that loop. PostgreSQL's connections are made
/// with `any()`, from whichever loop the pool happens to run on, so they all landed on one loop; and with NIO's loops as
/// Swift concurrency's executor, every request's work after its first query followed them there (a profile of the API
/// under load: most of the server's time on one of its two threads). Handing the connections out in turn lets that
/// work run on every loop (docs/PERFORMANCE.md; one thread still does more).
final class SpreadEventLoops: EventLoopGroup, Sendable {
    let base: any EventLoopGroup

    init(base: any EventLoopGroup) {
        self.base = base
    }

    func next() -> any EventLoop { self.base.next() }

    func any() -> any EventLoop { self.base.next() }

    func makeIterator() -> EventLoopIterator { self.base.makeIterator() }

    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
        self.base.shutdownGracefully(queue: queue, callback)
    }
}
