import Synchronization
import Testing

@testable import LivecastService

/// A quick worker with nothing to do waits for the earliest owed push this process noted, not for its next poll.
@Suite struct OwedDueTests {
    @Test func aWorkerWaitsUntilTheEarliestOwedPushIsDueAtMostItsPoll() async throws {
        let clock = ManualClock()
        let due = OwedDue(now: { clock.now })
        #expect(due.wait(atMost: .seconds(1)) == .seconds(1), "nothing owed: the poll")

        due.note(delays: [0.8, 0.3, 0.5])
        let wait = due.wait(atMost: .seconds(1))
        #expect(wait == .milliseconds(300))
        due.note(delays: [0.9])
        #expect(due.wait(atMost: .seconds(1)) == .milliseconds(300), "a later push moved the earliest")
        #expect(due.wait(atMost: .milliseconds(100)) == .milliseconds(100), "a wait longer than the poll")

        clock.advance(by: .milliseconds(350))
        #expect(due.wait(atMost: .seconds(1)) == .zero, "due: no wait")
        #expect(due.wait(atMost: .seconds(1)) == .seconds(1), "once taken, the poll again")
    }
}

/// A clock that moves only when told: time passing without waiting for it.
private final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)

    var now: ContinuousClock.Instant { self.instant.withLock { $0 } }

    func advance(by duration: Duration) { self.instant.withLock { $0 += duration } }
}
