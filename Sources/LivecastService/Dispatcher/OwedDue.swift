import Synchronization

/// When the earliest push this process owed comes due, so that a quick worker with nothing to do wakes for it instead
/// of at its next poll: under a brownout, owed pushes are tried again every second or less (``RetryPolicy``), and a
/// one-second poll on top would double the wait. Owed pushes another instance wrote are found by the poll.
final class OwedDue: Sendable {
    private let earliest = Mutex<ContinuousClock.Instant?>(nil)
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameter now: The clock; the continuous clock's now unless a test moves time itself.
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.now = now
    }

    /// Notes pushes owed again after these delays, in seconds.
    func note(delays: some Sequence<Double>) {
        guard let delay = delays.min() else { return }
        let now = self.now()
        let due = now + .seconds(max(delay, 0))
        self.earliest.withLock { earliest in
            if let current = earliest, current > now, current <= due { return }
            earliest = due
        }
    }

    /// How long a worker with nothing to do waits: until the earliest owed push is due, at most `limit`.
    func wait(atMost limit: Duration) -> Duration {
        self.earliest.withLock { earliest in
            guard let due = earliest else { return limit }
            let wait = due - self.now()
            guard wait > .zero else {
                earliest = nil
                return .zero
            }
            return min(wait, limit)
        }
    }
}
