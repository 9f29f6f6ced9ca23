import NIOCore

/// Swift concurrency task executors that run their jobs on NIO event loops, one for each loop of a group.
///
/// A connection is handled with its loop as its task executor preference (``ConnectionLoopHTTP1Channel``), so every
/// step of its requests resumes on the thread that reads and writes it.
final class EventLoopExecutors: Sendable {
    private let executors: [ObjectIdentifier: EventLoopTaskExecutor]

    init(group: any EventLoopGroup) {
        var executors: [ObjectIdentifier: EventLoopTaskExecutor] = [:]
        for loop in group.makeIterator() {
            executors[ObjectIdentifier(loop)] = EventLoopTaskExecutor(eventLoop: loop)
        }
        self.executors = executors
    }

    /// The executor of `loop`, or `nil` for a loop of another group.
    func executor(for loop: any EventLoop) -> EventLoopTaskExecutor? {
        self.executors[ObjectIdentifier(loop)]
    }
}

/// A task executor that runs each job on one event loop.
final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.eventLoop.execute { job.runSynchronously(on: executor) }
    }
}
