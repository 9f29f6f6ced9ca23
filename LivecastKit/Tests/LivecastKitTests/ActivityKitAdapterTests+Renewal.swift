#if os(Linux)
import ActivityKitStandIn
import Foundation
import Testing

@testable import LivecastKit

extension ActivityKitAdapterTests {
    /// A renewal (Livecast starts a new activity of a feed by push-to-start before Apple's 8 hours): once the kit
    /// reports the new activity, it ends the older ones of the same feed on the device and reports their end, never a
    /// dismissal: a channel-based one at once, a token-based one once Livecast acknowledged the new one's token.
    /// Nested, so it runs one test at a time with the other stand-in tests.
    @Suite struct Renewal {
        struct Score: Codable, Hashable {
            var home = 0
        }

        struct ChannelGame: ActivityAttributes {
            typealias ContentState = Score
            var feedKey: String
            var channel: String
        }

        struct TokenGame: ActivityAttributes {
            typealias ContentState = Score
            var feedKey: String
        }

        struct AwayGame: ActivityAttributes {
            typealias ContentState = Score
            var feedKey: String
        }

        struct GoneGame: ActivityAttributes {
            typealias ContentState = Score
            var feedKey: String
        }

        private static var content: ActivityContent<Score> { ActivityContent(state: Score(), staleDate: nil) }

        init() { ActivityKitControl.reset() }

        @Test func aChannelActivityIsEndedAtOnceWhenItsRenewalIsReported() async throws {
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let observation = Livecast.observe(ChannelGame.self, client: client, feed: { $0.feedKey }, channelID: { $0.channel })
            let old = ActivityKitControl.start(ChannelGame(feedKey: "game-1", channel: "Y2g="), content: Self.content)
            let other = ActivityKitControl.start(ChannelGame(feedKey: "game-2", channel: "Y2g="), content: Self.content)
            try await eventually("the first activities") { stub.requests.count == 2 }

            let renewed = ActivityKitControl.start(ChannelGame(feedKey: "game-1", channel: "Y2g="), content: Self.content)
            try await eventually("the older one gone") { old.activityState == .dismissed }
            try await idle(client)
            let routes = stub.requests.dropFirst(2).map(\.route).sorted()
            #expect(routes == ["DELETE /activities/\(old.id)", "PUT /activities/\(renewed.id)"], "its end, never a dismissal")
            #expect(renewed.activityState == .active && other.activityState == .active, "another feed's is left alone")
            try await eventually("the older one released") { await !client.observedActivityIDs.contains(old.id) }
            observation.cancel()
            await observation.value
            await client.shutdown()
        }

        @Test func aTokenActivityIsEndedOnlyOnceLivecastHasTheNewOnesToken() async throws {
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            var configuration = stub.configuration(storeDirectory: directory.url)
            configuration.retryPolicy = RetryPolicy(initialDelay: .seconds(120), maximumDelay: .seconds(120))
            let client = try LivecastClient(configuration: configuration)
            let events = EventRecorder(client)
            let observation = Livecast.observe(TokenGame.self, client: client, feed: { $0.feedKey })
            let old = ActivityKitControl.start(TokenGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x01]))
            try await eventually("the first activity") { stub.requests.count == 1 }

            // Livecast cannot take the new activity's token yet.
            let refusedOnce = Locked(false)
            let oldPath = "/activities/\(old.id)"
            stub.answer { request, _ in
                guard request.method == "PUT", request.path != oldPath, !refusedOnce.withLock({ $0 }) else { return nil }
                refusedOnce.withLock { $0 = true }
                return .error(503, "database_unavailable")
            }
            let renewed = ActivityKitControl.start(TokenGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x02]))
            try await eventually("the refusal") { !events.events(.retrying).isEmpty }
            try await Task.sleep(for: .milliseconds(200))
            #expect(old.activityState == .active, "not ended before Livecast can update the new one")

            await client.resume()
            try await eventually("the older one gone") { old.activityState == .dismissed }
            try await idle(client)
            let routes = stub.requests.dropFirst(1).map(\.route)
            #expect(routes == ["PUT /activities/\(renewed.id)", "PUT /activities/\(renewed.id)", "DELETE /activities/\(old.id)"])
            #expect(renewed.activityState == .active)
            observation.cancel()
            await observation.value
            await client.shutdown()
        }

        @Test func aRenewalThatCameWhileTheAppWasAwayIsAdoptedAtLaunch() async throws {
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            let first = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let firstObservation = Livecast.observe(AwayGame.self, client: first, feed: { $0.feedKey })
            let old = ActivityKitControl.start(AwayGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x01]))
            try await eventually("the first activity") { stub.requests.count == 1 }
            try await idle(first)
            firstObservation.cancel()
            await firstObservation.value
            await first.shutdown()

            let renewed = ActivityKitControl.start(AwayGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x02]))
            let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let observation = Livecast.observe(AwayGame.self, client: relaunched, feed: { $0.feedKey })
            try await eventually("the older one gone") { old.activityState == .dismissed }
            try await idle(relaunched)
            #expect(stub.requests.dropFirst(1).map(\.route) == ["PUT /activities/\(renewed.id)", "DELETE /activities/\(old.id)"])
            #expect(renewed.activityState == .active)
            observation.cancel()
            await observation.value
            await relaunched.shutdown()
        }

        @Test func anOlderActivityGoneWhileTheAppWasAwayIsReportedEndedNotDismissed() async throws {
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            let first = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let firstObservation = Livecast.observe(GoneGame.self, client: first, feed: { $0.feedKey })
            let old = ActivityKitControl.start(GoneGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x01]))
            let alone = ActivityKitControl.start(GoneGame(feedKey: "game-2"), content: Self.content, pushToken: Data([0x03]))
            try await eventually("the activities") { stub.requests.count == 2 }
            try await idle(first)
            firstObservation.cancel()
            await firstObservation.value
            await first.shutdown()
            let before = stub.requests.filter { $0.method != "PUT" }.count

            // While the app is away, Livecast renews the first: it starts the new one by push-to-start, then ends the
            // older one with a past dismissal date. And the user swipes away the other feed's.
            let renewed = ActivityKitControl.start(GoneGame(feedKey: "game-1"), content: Self.content, pushToken: Data([0x02]))
            ActivityKitControl.vanish(old)
            ActivityKitControl.vanish(alone)
            let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let observation = Livecast.observe(GoneGame.self, client: relaunched, feed: { $0.feedKey })
            try await eventually("the reconciliation") { stub.requests.filter { $0.method != "PUT" }.count >= before + 2 }
            try await idle(relaunched)
            let reports = Set(stub.requests.filter { $0.method != "PUT" }.dropFirst(before).map(\.route))
            #expect(reports.contains("DELETE /activities/\(old.id)") && !reports.contains("POST /activities/\(old.id)/dismissed"))
            #expect(reports.contains("POST /activities/\(alone.id)/dismissed"), "a dismissal the user made is still told")
            #expect(renewed.activityState == .active)
            observation.cancel()
            await observation.value
            await relaunched.shutdown()
        }
    }
}
#endif
