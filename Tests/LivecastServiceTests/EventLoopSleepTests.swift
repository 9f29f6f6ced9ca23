import NIOPosix
import Testing

@testable import LivecastService

/// The dispatcher's sleeps on an event loop's timer: as long as asked, and no longer once cancelled.
@Suite struct EventLoopSleepTests {
    private let loop = MultiThreadedEventLoopGroup.singleton.any()

    @Test func aSleepLastsItsDuration() async throws {
        let slept = try await ContinuousClock().measure { try await self.loop.sleep(for: .milliseconds(200)) }
        #expect(slept >= .milliseconds(200))
    }

    @Test func aCancelledSleepEndsAtOnceWithCancellationError() async throws {
        let sleeper = Task { try await self.loop.sleep(for: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        let clock = ContinuousClock()
        let start = clock.now
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.now - start < .seconds(30), "the sleep outlasted its cancellation")
    }

    @Test func aSleepInACancelledTaskDoesNotWait() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await self.loop.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.now - start < .seconds(30))
    }
}
