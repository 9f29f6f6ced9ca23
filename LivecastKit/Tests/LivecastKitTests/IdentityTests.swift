import Foundation
import Testing

@testable import LivecastKit

/// `identify(userID:assertion:)` binds the registrations to a user with a fresh assertion each time, asks again once
/// when Livecast refuses it, and falls back to no user rather than lose the token.
@Suite struct IdentityTests {
    /// Counts the closure's calls and hands out `assertion-1`, `assertion-2`…, or throws.
    private final class Assertions: Sendable {
        let calls = Locked(0)
        let fails: Bool

        init(fails: Bool = false) { self.fails = fails }

        var closure: @Sendable () async throws -> String {
            { [self] in
                let call = self.calls.withLock { count in
                    count += 1
                    return count
                }
                if self.fails { throw URLError(.notConnectedToInternet) }
                return "assertion-\(call)"
            }
        }

        var count: Int { self.calls.withLock { $0 } }
    }

    private static let activity = LivecastActivity(id: "A1", attributesType: "GameAttributes", feed: "game-4711")

    @Test func identifyingReRegistersWithTheUserAndAnAssertionThatIsNeverStored() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes", frequentUpdatesEnabled: true)
        await client.register(activity: Self.activity, updateToken: Data([0xBB]))
        try await idle(client)
        #expect(stub.requests.allSatisfy { $0.json["userId"] == nil && $0.json["userAssertion"] == nil })

        let assertions = Assertions()
        await client.identify(userID: "user-42", assertion: assertions.closure)
        try await idle(client)
        let bound = Array(stub.requests.dropFirst(2))
        #expect(bound.map(\.route).sorted() == ["PUT /activities/A1", "PUT /push-to-start-tokens/\(client.deviceID ?? "")/GameAttributes"])
        #expect(bound.allSatisfy { $0.string("userId") == "user-42" && $0.string("userAssertion")?.hasPrefix("assertion-") == true })
        #expect(bound.first { $0.path.hasPrefix("/push") }?.bool("frequentUpdatesEnabled") == true, "the rest of the registration is kept")
        #expect(bound.first { $0.path.hasPrefix("/activities") }?.string("pushToken") == "bb")
        #expect(assertions.count == 2, "asked once for each registration")

        // A later registration carries the user; the same user again re-sends nothing.
        await client.register(pushToStartToken: Data([0xAC]), for: "GameAttributes")
        await client.identify(userID: "user-42", assertion: assertions.closure)
        try await idle(client)
        #expect(stub.requests.count == 5)
        #expect(stub.requests.last?.string("userId") == "user-42" && stub.requests.last?.string("userAssertion") == "assertion-3")
        let file = try String(contentsOf: directory.url.appendingPathComponent(PendingStore.fileName), encoding: .utf8)
        #expect(!file.contains("assertion-"), "assertions never reach the disk")

        // Forgetting the user registers the push-to-start token again without one, which unbinds it in Livecast; an
        // activity keeps its user there (a registration without one leaves it), so nothing is sent for it.
        await client.forgetUser()
        try await idle(client)
        let unbound = Array(stub.requests.dropFirst(5))
        #expect(unbound.map(\.route) == ["PUT /push-to-start-tokens/\(client.deviceID ?? "")/GameAttributes"])
        #expect(unbound.allSatisfy { $0.json["userId"] == nil && $0.json["userAssertion"] == nil })
        await client.register(activity: LivecastActivity(id: "A2", attributesType: "GameAttributes"), updateToken: Data([0xCC]))
        try await idle(client)
        #expect(stub.requests.last?.path == "/activities/A2" && stub.requests.last?.json["userId"] == nil, "later ones carry no user")
        await client.shutdown()
    }

    @Test func aRefusedAssertionIsAskedForOnceMore() async throws {
        let stub = StubLivecast { request, index in
            index == 0 ? .error(403, "invalid_user_assertion", "the assertion expired") : nil
        }
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        let assertions = Assertions()
        await client.identify(userID: "user-42", assertion: assertions.closure)
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        try await idle(client)
        #expect(stub.requests.map { $0.string("userAssertion") } == ["assertion-1", "assertion-2"])
        #expect(stub.requests.allSatisfy { $0.string("userId") == "user-42" })
        #expect(events.events(.delivered).count == 1 && events.events(.identityBindingFailed).isEmpty, "\(events.events)")
        await client.shutdown()
    }

    @Test func refusedTwiceTheRegistrationGoesWithoutTheUser() async throws {
        let stub = StubLivecast { request, _ in
            request.json["userId"] != nil ? .error(403, "invalid_user_assertion", "aud is not com.example.game") : nil
        }
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        await client.identify(userID: "user-42", assertion: Assertions().closure)
        await client.register(pushToStartToken: Data([0xAA]), for: "GameAttributes")
        try await idle(client)
        #expect(stub.requests.map { $0.string("userAssertion") } == ["assertion-1", "assertion-2", nil])
        #expect(stub.requests.last?.string("token") == "aa" && stub.requests.last?.json["userId"] == nil, "the token is kept")
        let failed = events.events(.identityBindingFailed)
        #expect(failed.count == 1 && failed.first?.status == 403 && failed.first?.errorCode == "invalid_user_assertion")
        #expect(failed.first?.message?.contains("aud is not com.example.game") == true)
        #expect(events.events(.delivered).count == 1)

        // What Livecast has is the token without the user: identifying again tries the binding again.
        await client.identify(userID: "user-42", assertion: Assertions().closure)
        try await idle(client)
        #expect(stub.requests.count == 6)
        await client.shutdown()
    }

    @Test func aThrowingClosureSendsTheRegistrationWithoutTheUser() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        let assertions = Assertions(fails: true)
        await client.identify(userID: "user-42", assertion: assertions.closure)
        await client.register(activity: Self.activity, updateToken: Data([0xBB]))
        try await idle(client)
        #expect(stub.requests.count == 1 && stub.requests.first?.json["userId"] == nil && stub.requests.first?.string("pushToken") == "bb")
        #expect(assertions.count == 1)
        #expect(events.events(.identityBindingFailed).first?.message?.contains("the assertion closure threw") == true)
        await client.shutdown()
    }
}
