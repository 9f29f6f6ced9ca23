/// ``DatabaseWatch``'s decisions as a value: whether PostgreSQL counts as reachable, and what becomes of the work
/// waiting on it. The watch feeds it what happened (a probe's outcome, work admitted, succeeded or failed, the time
/// for late work) with the time it happened, and does what it returns: cancel work, answer it. It does no I/O and
/// reads no clock, so its tests need neither a socket nor a wait.
///
/// ```
/// reachable ──probe refused, or unanswered with no answer for `unansweredPatience`──▶ unreachable
///     ▲                                                                                   │
///     └─────────────────────────────── probe answered ────────────────────────────────────┘
/// ```
/// While unreachable, new work is refused. On the way there, unbounded work is answered at once (it goes on), and
/// bounded work is cancelled, then answered that its commit is in doubt if it still runs `abandonedWorkGrace` later.
struct DatabaseWatchStateMachine<Work> {
    /// What a probe found.
    enum Probe: Sendable, Equatable {
        case answered
        /// No connection, or the server is shutting down or starting up (SQLSTATE classes 08 and 57).
        case refused(String)
        /// No answer within the probe's timeout: `reason` says so.
        case unanswered(String)
    }

    /// What a probe changed.
    enum Change: Equatable {
        case becameUnreachable(String)
        case becameReachable
    }

    /// What the watch does after a probe: the change to log, the bounded work to cancel (it answers for itself as it
    /// ends), and the unbounded work to answer `database_unavailable` now.
    struct AfterProbe {
        var change: Change?
        var cancel: [Work] = []
        var answerUnavailable: [Work] = []
    }

    /// Work past its deadline (cancel it, answer `database_timed_out`), and work cancelled for an unreachable
    /// database still running after the grace (answer that nobody can tell whether it was kept).
    struct LateWork {
        var late: [Work] = []
        var inDoubt: [Work] = []
    }

    private struct Waiting {
        var work: Work
        /// `nil` for unbounded work.
        var deadline: ContinuousClock.Instant?
        /// When the database was found unreachable while this bounded work still ran, and it was cancelled.
        var abandonedAt: ContinuousClock.Instant?
    }

    /// How long without any answer before an unanswered probe makes the database unreachable.
    let unansweredPatience: Duration
    /// How long cancelled bounded work has to end before its commit counts as in doubt.
    let abandonedWorkGrace: Duration

    /// Whether the last probe counted as reachable (`true` until one says otherwise).
    private(set) var isReachable = true
    /// Why the last probe failed.
    private var lastError: String?
    /// When the database last answered: a probe, or work that succeeded.
    private var lastAnswer: ContinuousClock.Instant
    private var waiting: [Int: Waiting] = [:]
    private var nextTicket = 0

    /// - Parameter now: The time the watch starts, which counts as an answer.
    init(now: ContinuousClock.Instant, unansweredPatience: Duration, abandonedWorkGrace: Duration) {
        self.lastAnswer = now
        self.unansweredPatience = unansweredPatience
        self.abandonedWorkGrace = abandonedWorkGrace
    }

    /// Why the last probe failed, while the database is unreachable.
    var unreachableReason: String? { self.isReachable ? nil : self.lastError }

    /// How many pieces of work wait on the database.
    var waitingCount: Int { self.waiting.count }

    /// Admits work, bounded by `deadline` or not (`nil`). - Returns: its ticket, or `nil` while the database is
    /// unreachable (answer it `database_unavailable`).
    mutating func admit(_ work: Work, deadline: ContinuousClock.Instant?) -> Int? {
        guard self.isReachable else { return nil }
        self.nextTicket += 1
        self.waiting[self.nextTicket] = Waiting(work: work, deadline: deadline)
        return self.nextTicket
    }

    /// Changes the admitted work (the watch adds its task once started), unless it was already answered.
    mutating func update(_ ticket: Int, _ change: (inout Work) -> Void) {
        guard var waiting = self.waiting[ticket] else { return }
        change(&waiting.work)
        self.waiting[ticket] = waiting
    }

    /// The work succeeded: an answer from the database.
    mutating func succeeded(_ ticket: Int, at now: ContinuousClock.Instant) {
        self.waiting.removeValue(forKey: ticket)
        self.lastAnswer = now
    }

    /// The work failed. - Returns: whether it had been cancelled because the database was unreachable (then, unless
    /// its commit was in doubt, it wrote nothing and is answered `database_unavailable`).
    mutating func failed(_ ticket: Int) -> Bool {
        self.waiting.removeValue(forKey: ticket)?.abandonedAt != nil
    }

    /// Takes the work past its deadline and the abandoned work past its grace, at `now`.
    mutating func takeLateWork(at now: ContinuousClock.Instant) -> LateWork {
        var found = LateWork()
        for (ticket, waiting) in self.waiting {
            if let abandonedAt = waiting.abandonedAt {
                guard abandonedAt + self.abandonedWorkGrace <= now else { continue }
                found.inDoubt.append(waiting.work)
            } else {
                guard let deadline = waiting.deadline, deadline <= now else { continue }
                found.late.append(waiting.work)
            }
            self.waiting.removeValue(forKey: ticket)
        }
        return found
    }

    /// Records a probe's outcome at `now`: refused makes the database unreachable at once, unanswered once nothing
    /// has answered for ``unansweredPatience``, answered reachable again.
    mutating func record(_ probe: Probe, at now: ContinuousClock.Instant) -> AfterProbe {
        let error: String?
        let patience: Duration
        switch probe {
        case .answered: (error, patience) = (nil, .zero)
        case .refused(let reason): (error, patience) = (reason, .zero)
        case .unanswered(let reason): (error, patience) = (reason, self.unansweredPatience)
        }
        if error == nil { self.lastAnswer = now }
        let reachable = error == nil || self.lastAnswer.duration(to: now) < patience
        var after = AfterProbe(change: nil)
        if self.isReachable != reachable { after.change = reachable ? .becameReachable : .becameUnreachable(error ?? "") }
        self.isReachable = reachable
        self.lastError = error
        guard !reachable else { return after }
        for (ticket, waiting) in self.waiting {
            if waiting.deadline == nil {
                self.waiting.removeValue(forKey: ticket)
                after.answerUnavailable.append(waiting.work)
            } else if waiting.abandonedAt == nil {
                self.waiting[ticket]?.abandonedAt = now
                after.cancel.append(waiting.work)
            }
        }
        return after
    }
}
