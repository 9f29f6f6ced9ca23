import Foundation
import Testing

@testable import LivecastKit

/// A push-to-start wakes the app in the background for a few seconds: the client holds a background-task assertion
/// while it sends (`UIApplication.beginBackgroundTask` on iOS), and releases it after each try, also before it waits
/// out a backoff.
@Suite(.timeLimit(.minutes(1))) struct BackgroundTimeTests {
    @Test func anAssertionIsHeldWhileEachReportIsSentAndReleasedAfter() async throws {
        let recorder = BackgroundRecorder()
        let heldDuringRequests = Locked<[Int]>([])
        let stub = StubLivecast { _, index in
            heldDuringRequests.withLock { $0.append(recorder.held) }
            return index == 0 ? .error(503, "database_unavailable") : nil
        }
        let directory = try TemporaryDirectory()
        var configuration = stub.configuration(storeDirectory: directory.url)
        configuration.backgroundTime = recorder.backgroundTime
        configuration.retryPolicy = RetryPolicy(initialDelay: .seconds(120), maximumDelay: .seconds(120))
        let client = try LivecastClient(configuration: configuration)
        let events = EventRecorder(client)

        await client.register(activity: LivecastActivity(id: "A1", attributesType: "GameAttributes"), updateToken: Data([0x0A]))
        try await eventually("the first failure") { !events.events(.retrying).isEmpty }
        try await eventually("the assertion released during the backoff") { recorder.held == 0 }
        await client.resume()
        try await idle(client)
        #expect(heldDuringRequests.withLock { $0 } == [1, 1], "held during each try")
        try await eventually("the assertion released") { recorder.held == 0 }
        #expect(recorder.begun == 2, "one for each try")
        await client.shutdown()
    }
}
