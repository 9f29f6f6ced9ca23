import Foundation
import Testing

@testable import LivecastKit

/// `resume()` (the app became active) retries at once what waits out a backoff, but never before a `Retry-After`.
@Suite(.timeLimit(.minutes(1))) struct ResumeTests {
    /// A client whose backoff is a minute: only `resume()` can make a retry come soon.
    private static func slowClient(_ stub: StubLivecast, _ directory: TemporaryDirectory) throws -> LivecastClient {
        var configuration = stub.configuration(storeDirectory: directory.url)
        configuration.retryPolicy = RetryPolicy(initialDelay: .seconds(120), maximumDelay: .seconds(120))
        return try LivecastClient(configuration: configuration)
    }

    @Test func resumeRetriesAtOnce() async throws {
        let stub = StubLivecast { _, index in index == 0 ? .error(503, "database_unavailable") : nil }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        try await eventually("the first failure") { !events.events(.retrying).isEmpty }
        #expect((events.events(.retrying).first?.retryDelay ?? .zero) >= .seconds(60))
        let resumed = ContinuousClock.now
        await client.resume()
        try await idle(client)
        #expect(ContinuousClock.now - resumed < .seconds(5))
        #expect(stub.requests.count == 2 && events.events(.delivered).count == 1)
        await client.shutdown()
    }

    @Test func resumeNeverRetriesBeforeRetryAfter() async throws {
        let stub = StubLivecast { _, index in index == 0 ? .error(429, "rate_limited", headers: ["Retry-After": "2"]) : nil }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        let started = ContinuousClock.now
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        try await eventually("the first failure") { !events.events(.retrying).isEmpty }
        await client.resume()
        try await Task.sleep(for: .milliseconds(500))
        #expect(stub.requests.count == 1, "Retry-After: 2 still runs")
        try await idle(client)
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(2) && waited < .seconds(10), "retried at Retry-After, not after the 60 s backoff: \(waited)")
        #expect(stub.requests.count == 2)
        await client.shutdown()
    }

    @Test func shutdownEndsABackoff() async throws {
        let stub = StubLivecast { _, _ in .error(503, "database_unavailable") }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        try await eventually("the first failure") { !events.events(.retrying).isEmpty }
        let started = ContinuousClock.now
        await client.shutdown()
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(await client.pendingReports.count == 1, "kept for the next launch")
    }

    @Test func waitingUntilIdleEndsWithTheWaitingTask() async throws {
        let stub = StubLivecast { _, _ in .error(503, "database_unavailable") }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        let waiting = Task { await client.waitUntilIdle() }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        await waiting.value  // returns, though the report still waits
        #expect(await client.pendingReports.count == 1)
        await client.shutdown()
    }
}
