#if os(Linux)
import ActivityKitStandIn
import Foundation
import Testing

@testable import LivecastKit

extension ActivityKitAdapterTests {
    /// An activity the app scheduled with a later start date (iOS 26 `.pending`) is reported with `"pending": true`,
    /// so that a backend does not start a second one, and again without it when it starts. Nested, so it runs one test
    /// at a time with the other stand-in tests.
    @Suite struct Pending {
        struct ScheduledAttributes: ActivityAttributes {
            struct ContentState: Codable, Hashable {}
            var feedKey: String
        }

        init() { ActivityKitControl.reset() }

        @Test func aScheduledActivityIsReportedPendingThenStarted() async throws {
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let observation = Livecast.observe(ScheduledAttributes.self, client: client, feed: { $0.feedKey })
            let activity = ActivityKitControl.start(
                ScheduledAttributes(feedKey: "game-4711"),
                content: ActivityContent(state: ScheduledAttributes.ContentState(), staleDate: nil),
                pushToken: Data([0x0A]),
                state: .pending
            )
            try await eventually("the pending activity") { stub.requests.count == 1 }
            let pending = try #require(stub.requests.last)
            #expect(pending.route == "PUT /activities/\(activity.id)" && pending.bool("pending") == true)
            #expect(pending.string("pushToken") == "0a" && pending.string("feed") == "game-4711")
            try await eventually("its observers") { ActivityKitControl.observerCount(of: activity) == 2 }

            ActivityKitControl.setState(of: activity, .active)  // its start date came
            try await eventually("the started activity") { stub.requests.count == 2 }
            let started = try #require(stub.requests.last)
            #expect(started.route == "PUT /activities/\(activity.id)" && started.json["pending"] == nil)
            #expect(started.string("pushToken") == "0a", "the same registration, started")
            try await idle(client)
            #expect(stub.requests.count == 2)
            observation.cancel()
            await observation.value
            await client.shutdown()
        }
    }
}
#endif
