import NIOCore

/// A task executor that runs each job on one event loop.
public final class EventLoopTaskExecutor: TaskExecutor, Sendable {
    /// The loop that runs the jobs.
    public let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = self.asUnownedTaskExecutor()
        self.eventLoop.execute { job.runSynchronously(on: executor) }
    }
}
