import LivecastTesting
import Synchronization
import Testing

@testable import LivecastService

/// A notification wakes one waiting worker, and one that comes while nobody waits is kept for the next wait.
@Suite struct WakeSignalTests {
    @Test func aSignalWakesOneWaiterAndTheNextSignalAnother() async throws {
        let wake = WakeSignal()
        let woken = Woken()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    await wake.wait(timeout: .seconds(60))
                    woken.count.add(1, ordering: .relaxed)
                }
            }
            try await Self.until { wake.waiting == 2 }
            wake.signal()
            try await Self.until { woken.count.load(ordering: .relaxed) == 1 }
            #expect(wake.waiting == 1, "a signal woke more than one worker")
            wake.signal()
            try await group.waitForAll()
            #expect(woken.count.load(ordering: .relaxed) == 2)
        }
    }

    /// Waits until `condition` holds, at most 30 s (a loaded machine may take a while to start tasks).
    private static func until(_ condition: @escaping @Sendable () -> Bool) async throws {
        try await eventually(within: .seconds(30), every: .milliseconds(10), "a wait to return", condition)
    }

    /// How many waits returned.
    private final class Woken: Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func aSignalWithNobodyWaitingIsKeptForTheNextWaitOnly() async throws {
        let wake = WakeSignal()
        wake.signal()
        let clock = ContinuousClock()
        let kept = await clock.measure { await wake.wait(timeout: .seconds(30)) }
        #expect(kept < .seconds(5), "the signal was lost")
        let timedOut = await clock.measure { await wake.wait(timeout: .milliseconds(200)) }
        #expect(timedOut >= .milliseconds(200), "one signal woke two waits")
    }
}
