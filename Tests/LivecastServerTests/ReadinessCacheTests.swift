import Synchronization
import Testing

@testable import LivecastServer

/// ``ReadinessCache`` on a clock the test moves: an answer is served again while it is younger than the lifetime, made
/// anew once it is not, and callers that arrive while one is being made share it.
@Suite struct ReadinessCacheTests {
    /// A clock that moves only when told.
    private final class ManualTime: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { self.instant.withLock { $0 } }
        func advance(by duration: Duration) { self.instant.withLock { $0 += duration } }
    }

    /// Answers that say how many were made.
    private final class Maker: Sendable {
        private let count = Mutex(0)
        var made: Int { self.count.withLock { $0 } }

        @Sendable func make() async -> ReadinessCache.Answer {
            let number = self.count.withLock { count in
                count += 1
                return count
            }
            return ReadinessCache.Answer(checks: ["database": "ok"], detail: ["answer": "\(number)"])
        }
    }

    @Test func anAnswerIsKeptForItsLifetimeOnly() async {
        let time = ManualTime()
        let maker = Maker()
        let cache = ReadinessCache(lifetime: .seconds(1), now: { time.now })
        #expect(await cache.answer(maker.make).detail["answer"] == "1")
        time.advance(by: .milliseconds(999))
        #expect(await cache.answer(maker.make).detail["answer"] == "1")
        time.advance(by: .milliseconds(1))
        #expect(await cache.answer(maker.make).detail["answer"] == "2")
        #expect(maker.made == 2)
    }

    @Test func callersArrivingTogetherShareOneAnswer() async {
        let time = ManualTime()
        let maker = Maker()
        let cache = ReadinessCache(lifetime: .seconds(1), now: { time.now })
        let answers = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<20 { group.addTask { await cache.answer(maker.make).detail["answer"] } }
            return await group.reduce(into: Set<String?>()) { $0.insert($1) }
        }
        #expect(answers == ["1"])
        #expect(maker.made == 1)
    }
}
