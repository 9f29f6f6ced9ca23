#if os(Linux)
import ActivityKitStandIn
import Foundation
import Testing

@testable import LivecastKit

/// `Livecast.observe` compiled against the ActivityKit stand-in, driven as a phone would drive ActivityKit. The
/// stand-in's settings are global, so the tests go one at a time, each with attributes types of its own.
@Suite(.serialized, .timeLimit(.minutes(1))) struct ActivityKitAdapterTests {
    struct Score: Codable, Hashable {
        var home = 0
        var away = 0
    }

    struct RotationAttributes: ActivityAttributes {
        typealias ContentState = Score
        var feedKey: String
    }

    struct AwayAttributes: ActivityAttributes {
        typealias ContentState = Score
    }

    struct DismissalAttributes: ActivityAttributes {
        typealias ContentState = Score
    }

    struct FrequentAttributes: ActivityAttributes {
        typealias ContentState = Score
    }

    struct ChannelAttributes: ActivityAttributes {
        typealias ContentState = Score
        var channel: String
    }

    private static var content: ActivityContent<Score> { ActivityContent(state: Score(), staleDate: nil) }

    init() { ActivityKitControl.reset() }

    @Test func tokensAndTheirRotationsAreReported() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let device = try #require(client.deviceID)
        ActivityKitControl.setPushToStartToken(Data([0x51]), for: RotationAttributes.self)
        let observation = Livecast.observe(RotationAttributes.self, client: client, feed: { $0.feedKey })
        try await eventually("the push-to-start token") { stub.requests.count == 1 }
        #expect(stub.requests.last?.route == "PUT /push-to-start-tokens/\(device)/RotationAttributes")
        #expect(stub.requests.last?.string("token") == "51" && stub.requests.last?.bool("frequentUpdatesEnabled") == false)

        let activity = ActivityKitControl.start(RotationAttributes(feedKey: "game-4711"), content: Self.content, pushToken: Data([0xA1]))
        try await eventually("the activity") { stub.requests.count == 2 }
        let registered = try #require(stub.requests.last)
        #expect(registered.route == "PUT /activities/\(activity.id)")
        #expect(registered.string("pushToken") == "a1" && registered.string("feed") == "game-4711")
        #expect(registered.string("attributesType") == "RotationAttributes" && registered.string("deviceId") == device)

        ActivityKitControl.rotatePushToken(of: activity, to: Data([0xA2]))
        try await eventually("the rotated update token") { stub.requests.count == 3 }
        #expect(stub.requests.last?.string("pushToken") == "a2")
        ActivityKitControl.setPushToStartToken(Data([0x52]), for: RotationAttributes.self)
        try await eventually("the rotated push-to-start token") { stub.requests.count == 4 }
        #expect(stub.requests.last?.string("token") == "52")
        try await idle(client)
        #expect(stub.requests.count == 4, "nothing twice: \(stub.requests.map(\.route))")
        observation.cancel()
        await observation.value
        await client.shutdown()
    }

    @Test func activitiesThatEndedWhileTheAppWasAwayAreReportedAtLaunch() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let ended = ActivityKitControl.start(AwayAttributes(), content: Self.content, pushToken: Data([0x01]))
        let gone = ActivityKitControl.start(AwayAttributes(), content: Self.content, pushToken: Data([0x02]))
        let running = ActivityKitControl.start(AwayAttributes(), content: Self.content, pushToken: Data([0x03]))
        let first = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let firstObservation = Livecast.observe(AwayAttributes.self, client: first)
        try await eventually("the three activities") { stub.requests.count == 3 }
        try await idle(first)
        firstObservation.cancel()
        await firstObservation.value
        await first.shutdown()  // the app is gone…

        ActivityKitControl.setState(of: ended, .ended)  // …while one activity ends and another is dismissed
        ActivityKitControl.vanish(gone)
        let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let observation = Livecast.observe(AwayAttributes.self, client: relaunched)
        try await eventually("the reconciliation") { stub.requests.count == 5 }
        try await idle(relaunched)
        try await Task.sleep(for: .milliseconds(100))
        let routes = stub.requests.dropFirst(3).map(\.route).sorted()
        #expect(routes == ["DELETE /activities/\(ended.id)", "POST /activities/\(gone.id)/dismissed"], "\(routes), \(running.id) runs on")
        observation.cancel()
        await observation.value
        await relaunched.shutdown()
    }

    @Test func aDismissalIsReportedAndTheActivitysTasksEnd() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let observation = Livecast.observe(DismissalAttributes.self, client: client)
        let activity = ActivityKitControl.start(DismissalAttributes(), content: Self.content, pushToken: Data([0x01]))
        try await eventually("the activity") { stub.requests.count == 1 }
        try await eventually("its observers") { ActivityKitControl.observerCount(of: activity) == 2 }
        #expect(await client.observedActivityIDs == [activity.id])

        await activity.end(nil, dismissalPolicy: .default)
        try await eventually("the end") { stub.requests.count == 2 }
        try await eventually("the token observation ended") { ActivityKitControl.observerCount(of: activity) == 1 }
        ActivityKitControl.setState(of: activity, .dismissed)
        try await eventually("the dismissal") { stub.requests.count == 3 }
        #expect(
            stub.requests.map(\.route) == [
                "PUT /activities/\(activity.id)", "DELETE /activities/\(activity.id)", "POST /activities/\(activity.id)/dismissed",
            ]
        )
        try await eventually("the activity released") { await client.observedActivityIDs.isEmpty }
        #expect(ActivityKitControl.observerCount(of: activity) == 0)
        observation.cancel()
        await observation.value
        await client.shutdown()
    }

    @Test func aFrequentPushesChangeIsFollowed() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        ActivityKitControl.setFrequentPushesEnabled(true)
        ActivityKitControl.setPushToStartToken(Data([0x61]), for: FrequentAttributes.self)
        let observation = Livecast.observe(FrequentAttributes.self, client: client)
        try await eventually("the push-to-start token") { stub.requests.count == 1 }
        #expect(stub.requests.last?.bool("frequentUpdatesEnabled") == true)

        ActivityKitControl.setFrequentPushesEnabled(false)
        try await eventually("the re-registration") { stub.requests.count == 2 }
        #expect(stub.requests.last?.string("token") == "61" && stub.requests.last?.bool("frequentUpdatesEnabled") == false)
        ActivityKitControl.setPushToStartToken(Data([0x62]), for: FrequentAttributes.self)
        try await eventually("the rotation") { stub.requests.count == 3 }
        #expect(stub.requests.last?.string("token") == "62" && stub.requests.last?.bool("frequentUpdatesEnabled") == false, "the latest setting")
        observation.cancel()
        await observation.value
        await client.shutdown()
    }

    @Test func aChannelActivityIsReportedWithTheChannelItsAttributesName() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let observation = Livecast.observe(ChannelAttributes.self, client: client, channelID: { $0.channel })
        let activity = try Activity.request(
            attributes: ChannelAttributes(channel: "Y2hhbm5lbA=="),
            content: Self.content,
            pushType: .channel("Y2hhbm5lbA==")
        )
        try await eventually("the activity") { stub.requests.count == 1 }
        #expect(stub.requests.last?.route == "PUT /activities/\(activity.id)" && stub.requests.last?.string("channelId") == "Y2hhbm5lbA==")
        #expect(stub.requests.last?.json["pushToken"] == nil)
        observation.cancel()
        await observation.value
        await client.shutdown()
    }
}
#endif
