import NIOCore

/// One load over a client's connections, run on their event loop: which request goes when, on which connection,
/// and what came back. Open loop (``Pace/open(interval:)``): request `i` is due at `start + i × interval` whatever
/// the server does, waits for a free connection if none is, and its latency counts from the time it was due, so a
/// stall shows in the percentiles (no coordinated omission). Closed loop (``Pace/closed(until:)``): each connection
/// sends its next request as soon as it has an answer, and latency counts from the send.
final class LoadRun {
    /// How requests are paced.
    enum Pace {
        /// Request `i` is due `i × interval` nanoseconds after the start.
        case open(interval: Double)
        /// As fast as answers come, until the deadline (`nil`: until the requests run out).
        case closed(until: NIODeadline?)
    }

    /// A run with no answer for this long, while requests wait, is ended; what it still waits for counts as errors.
    static let watchdogPeriod = TimeAmount.seconds(30)

    private let loop: NIOIsolatedEventLoop
    private let pace: Pace
    private let total: Int
    private let request: (Int) -> APIRequest
    private let onFinish: (LoadResult) -> Void
    private let start: NIODeadline
    private var idle: [HTTPExchangeHandler]
    /// Due requests that wait for a connection (open loop), from `waitingHead` on.
    private var waiting: [Int] = []
    private var waitingHead = 0
    /// The next request not yet due or taken.
    private var next = 0
    private var inFlight = 0
    private var answeredSinceWatch = false
    private var lastAnswer: NIODeadline
    private var isFinished = false
    private var result = LoadResult()

    /// - Parameters:
    ///   - connections: The idle connections to use.
    ///   - total: How many requests at most.
    ///   - request: Makes request `i`.
    ///   - onFinish: Gets the result once every request sent is answered (or the watchdog gave up on them).
    init(
        on loop: NIOIsolatedEventLoop,
        connections: [HTTPExchangeHandler],
        pace: Pace,
        total: Int,
        request: @escaping (Int) -> APIRequest,
        onFinish: @escaping (LoadResult) -> Void
    ) {
        self.loop = loop
        self.idle = connections
        self.pace = pace
        self.total = total
        self.request = request
        self.onFinish = onFinish
        self.start = .now() + .milliseconds(1)
        self.lastAnswer = self.start
    }

    /// Starts sending.
    func begin() {
        switch self.pace {
        case .open:
            self.loop.scheduleTask(deadline: self.start) { self.releaseDue() }
        case .closed:
            let connections = self.idle
            self.idle = []
            for connection in connections { self.use(connection) }
            self.finishIfDone()
        }
        self.watch()
    }

    /// Open loop: moves every request due by now to the waiting line, hands them to idle connections, and wakes up
    /// again when the next one is due.
    private func releaseDue() {
        guard !self.isFinished else { return }
        let now = NIODeadline.now()
        while self.next < self.total, self.due(self.next) <= now {
            self.waiting.append(self.next)
            self.next += 1
        }
        while !self.idle.isEmpty, self.waitingHead < self.waiting.count {
            self.send(self.takeWaiting(), on: self.idle.removeLast())
        }
        if self.next < self.total {
            self.loop.scheduleTask(deadline: self.due(self.next)) { self.releaseDue() }
        } else {
            self.finishIfDone()
        }
    }

    private func due(_ index: Int) -> NIODeadline {
        guard case .open(let interval) = self.pace else { return self.start }
        return self.start + .nanoseconds(Int64(Double(index) * interval))
    }

    private func takeWaiting() -> Int {
        defer { self.waitingHead += 1 }
        return self.waiting[self.waitingHead]
    }

    /// Gives a free connection its next request, or keeps it idle.
    private func use(_ connection: HTTPExchangeHandler) {
        if self.waitingHead < self.waiting.count {
            self.send(self.takeWaiting(), on: connection)
        } else if case .closed(let deadline) = self.pace, self.next < self.total, deadline.map({ NIODeadline.now() < $0 }) ?? true {
            self.next += 1
            self.send(self.next - 1, on: connection)
        } else {
            self.idle.append(connection)
        }
    }

    private func send(_ index: Int, on connection: HTTPExchangeHandler) {
        self.inFlight += 1
        let origin: NIODeadline
        if case .open = self.pace { origin = self.due(index) } else { origin = .now() }
        connection.send(self.request(index)) { answer in
            self.inFlight -= 1
            self.answeredSinceWatch = true
            self.lastAnswer = answer.receivedAt
            self.result.record(answer, since: origin)
            // A connection that failed is not used again.
            if answer.status != 0, !self.isFinished { self.use(connection) }
            self.finishIfDone()
        }
    }

    private func finishIfDone() {
        guard self.inFlight == 0, self.waitingHead == self.waiting.count else { return }
        if case .open = self.pace, self.next < self.total { return }
        self.finish()
    }

    /// Ends a run that has had no answer for a watchdog period while requests wait.
    private func watch() {
        self.loop.scheduleTask(in: Self.watchdogPeriod) {
            guard !self.isFinished else { return }
            if !self.answeredSinceWatch {
                let unanswered = self.inFlight + self.waiting.count - self.waitingHead
                self.result.recordError("no answer within \(Self.watchdogPeriod.nanoseconds / 1_000_000_000) s", count: unanswered)
                self.finish()
            } else {
                self.answeredSinceWatch = false
                self.watch()
            }
        }
    }

    private func finish() {
        guard !self.isFinished else { return }
        self.isFinished = true
        self.result.elapsed = Duration(self.lastAnswer - self.start)
        self.onFinish(self.result)
    }
}
