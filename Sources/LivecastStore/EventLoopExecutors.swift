package import NIOCore
import NIOPosix

/// Swift concurrency task executors that run their jobs on NIO event loops, one for each loop of a group.
///
/// Work that reads and writes a channel runs with the channel's loop as its task executor preference, so it does not
/// hop between that loop and another at every step: an HTTP connection's requests (`ConnectionLoopHTTP1Channel`) and
/// a PostgreSQL lease's statements (``PostgresNIO/PostgresClient/withGuardedConnection(logger:file:line:_:)``).
package final class EventLoopExecutors: Sendable {
    /// The executors of NIO's shared group, whose loops the server and its PostgreSQL connections use.
    package static let singleton = EventLoopExecutors(group: MultiThreadedEventLoopGroup.singleton)

    private let executors: [ObjectIdentifier: EventLoopTaskExecutor]

    package init(group: any EventLoopGroup) {
        var executors: [ObjectIdentifier: EventLoopTaskExecutor] = [:]
        for loop in group.makeIterator() {
            executors[ObjectIdentifier(loop)] = EventLoopTaskExecutor(eventLoop: loop)
        }
        self.executors = executors
    }

    /// The executor of `loop`, or `nil` for a loop of another group.
    package func executor(for loop: any EventLoop) -> EventLoopTaskExecutor? {
        self.executors[ObjectIdentifier(loop)]
    }
}

/// The current task's executor preference, for a task it starts: `Task {}` does not inherit it, so a task meant to run
/// where its starter runs (on a connection's loop) is started with `Task(executorPreference:)` and this.
package func currentTaskExecutorPreference() -> (any TaskExecutor)? {
    withUnsafeCurrentTask { $0?.unownedTaskExecutor?.asTaskExecutor() }
}

/// A task executor that runs each job on one event loop.
package final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    package let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.eventLoop.execute { job.runSynchronously(on: executor) }
    }
}
