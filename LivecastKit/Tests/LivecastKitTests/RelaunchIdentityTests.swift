import Foundation
import Testing

@testable import LivecastKit

/// The user binding survives a relaunch: Livecast replaces a push-to-start token's user with the registration's (none
/// included), so a registration made at launch before the app calls `identify` must not go without the user.
@Suite(.timeLimit(.minutes(1))) struct RelaunchIdentityTests {
    private static let activity = LivecastActivity(id: "A1", attributesType: "GameAttributes", feed: "game-4711")

    /// A first launch that binds user-42: its push-to-start token and activity acknowledged with the user.
    private static func firstLaunch(_ stub: StubLivecast, _ directory: TemporaryDirectory) async throws {
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        await client.identify(userID: "user-42") { "assertion-first" }
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        await client.register(activity: Self.activity, updateToken: Data([0xBB]))
        try await idle(client)
        await client.shutdown()
        #expect(stub.requests.count == 2 && stub.requests.allSatisfy { $0.string("userId") == "user-42" })
    }

    private static func relaunch(_ stub: StubLivecast, _ directory: TemporaryDirectory, grace: Duration = .seconds(60)) throws -> LivecastClient {
        var configuration = stub.configuration(storeDirectory: directory.url)
        configuration.identifyGracePeriod = grace
        return try LivecastClient(configuration: configuration)
    }

    @Test func registrationsBeforeIdentifyNeverUnbindTheUser() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        try await Self.firstLaunch(stub, directory)

        let client = try Self.relaunch(stub, directory)
        let events = EventRecorder(client)
        // At launch, before identify: ActivityKit tells the same token and the same activity again…
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        await client.register(activity: Self.activity, updateToken: Data([0xBB]))
        #expect(await client.pendingReports.isEmpty, "nothing new: nothing is sent, and nothing unbinds the user")
        // …then the token rotates, and a push starts a new activity.
        await client.register(pushToStartToken: Data([0xAC]), for: "GameAttributes")
        await client.register(activity: LivecastActivity(id: "A2", attributesType: "GameAttributes"), updateToken: Data([0xCC]))
        try await eventually("the new activity") { stub.requests.count == 3 }
        let started = try #require(stub.requests.last)
        #expect(started.path == "/activities/A2" && started.json["userId"] == nil, "an activity goes without the user: Livecast keeps it")
        try await eventually("the hold") { !events.events(.held).isEmpty }
        #expect(events.events(.held).first?.report?.description == "push-to-start token for GameAttributes")
        try await eventually("only the rotated token waits") {
            await client.pendingReports.map(\.description) == ["push-to-start token for GameAttributes"]
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(stub.requests.count == 3)

        // The app says who the user is: the token goes with the user and a fresh assertion, the new activity too.
        await client.identify(userID: "user-42") { "assertion-second" }
        try await idle(client)
        let bound = stub.requests.dropFirst(3)
        #expect(Set(bound.map(\.path)) == ["/push-to-start-tokens/\(client.deviceID ?? "")/GameAttributes", "/activities/A2"])
        #expect(bound.allSatisfy { $0.string("userId") == "user-42" && $0.string("userAssertion") == "assertion-second" })
        #expect(bound.first { $0.path.hasPrefix("/push") }?.string("token") == "ac")
        #expect(
            stub.requests.filter { $0.path.hasPrefix("/push") }.allSatisfy { $0.string("userId") == "user-42" },
            "no push-to-start registration ever went without the user"
        )
        #expect(events.events(.identityBindingFailed).isEmpty && events.events(.dropped).isEmpty, "\(events.events)")
        await client.shutdown()
    }

    @Test func withoutIdentifyTheTokenGoesAfterTheGracePeriodAndSaysSo() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        try await Self.firstLaunch(stub, directory)

        let client = try Self.relaunch(stub, directory, grace: .milliseconds(300))
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0xAC]), for: "GameAttributes")
        try await idle(client)
        let sent = try #require(stub.requests.last)
        #expect(sent.string("token") == "ac" && sent.json["userId"] == nil, "the token is not lost")
        try await eventually("the event") { !events.events(.identityBindingFailed).isEmpty }
        #expect(events.events(.identityBindingFailed).first?.message?.contains("unbinds the push-to-start token from user-42") == true)
        await client.shutdown()
    }

    @Test func forgettingTheUserAtLaunchSendsTheWaitingTokenWithoutOne() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        try await Self.firstLaunch(stub, directory)

        let client = try Self.relaunch(stub, directory)
        await client.register(pushToStartToken: Data([0xAC]), for: "GameAttributes")
        try await Task.sleep(for: .milliseconds(100))
        #expect(stub.requests.count == 2)
        await client.forgetUser()
        try await idle(client)
        #expect(stub.requests.count == 3 && stub.requests.last?.string("token") == "ac" && stub.requests.last?.json["userId"] == nil)
        await client.shutdown()

        // Forgotten is remembered too: the next launch registers without a user at once.
        let next = try Self.relaunch(stub, directory)
        await next.register(pushToStartToken: Data([0xAD]), for: "GameAttributes")
        try await idle(next)
        #expect(stub.requests.count == 4 && stub.requests.last?.json["userId"] == nil)
        await next.shutdown()
    }

    @Test func aFileFromBeforeTheUserWasKeptRemembersTheAcknowledgedUser() throws {
        let json = #"""
            {"acknowledged":{"push-to-start\/GameAttributes":{"at":800000000,"content":{"pushToStartToken":{"attributesType":"GameAttributes","token":"aa","userID":"user-42"}}}},
             "deviceID":"d","nextSequence":1,"pending":[]}
            """#
        var state = try JSONDecoder().decode(PendingState.self, from: Data(json.utf8))
        #expect(state.boundUser == nil && state.rememberedUser == "user-42")
        state.boundUser = .nobody
        #expect(state.rememberedUser == nil)
    }
}
