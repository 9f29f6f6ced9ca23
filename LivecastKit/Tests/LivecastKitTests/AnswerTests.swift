import Foundation
import Testing

@testable import LivecastKit

/// What the client does with Livecast's refusals: a push-to-start token is never given up on an answer a later try
/// can change (the `409` of a token moving to a reinstalled app's new device id), a report is held while the device
/// is at its cap and goes once room is made, and a report dropped says why.
@Suite(.timeLimit(.minutes(1))) struct AnswerTests {
    /// A client whose backoff is two minutes: only a wake can make a retry come soon.
    private static func slowClient(_ stub: StubLivecast, _ directory: TemporaryDirectory) throws -> LivecastClient {
        var configuration = stub.configuration(storeDirectory: directory.url)
        configuration.retryPolicy = RetryPolicy(initialDelay: .seconds(120), maximumDelay: .seconds(120))
        return try LivecastClient(configuration: configuration)
    }

    @Test func aTokenMovingToAReinstalledAppsNewDeviceIsNotDropped() async throws {
        // Livecast as it treats a token that comes back under a new device id: a move. The first try meets the old
        // device's registration at the same moment and is told to retry (a 409 without a field); the next moves it.
        let holders = Locked<[String: String]>([:])
        let raced = Locked(false)
        let stub = StubLivecast { request, _ in
            guard request.method == "PUT", let token = request.string("token"), let device = request.headers["livecast-device-id"] else { return nil }
            let holder = holders.withLock { $0[token] }
            if let holder, holder != device, !raced.withLock({ $0 }) {
                raced.withLock { $0 = true }
                return .error(409, "conflict", "another registration for this device and type happened at the same time; retry")
            }
            holders.withLock { $0[token] = device }
            switch holder {
            case nil: return StubLivecast.Answer(status: 201, body: #"{"result":"created"}"#)
            case device: return StubLivecast.Answer(status: 200, body: #"{"result":"unchanged"}"#)
            default: return StubLivecast.Answer(status: 200, body: #"{"result":"rotated"}"#)
            }
        }
        let before = try TemporaryDirectory()
        let first = try LivecastClient(configuration: stub.configuration(storeDirectory: before.url))
        await first.register(pushToStartToken: Data([0xAB]), for: "GameAttributes")
        try await idle(first)
        await first.shutdown()

        // Reinstalled: a new store, so a new device id, and the same push-to-start token.
        let after = try TemporaryDirectory()
        let reinstalled = try LivecastClient(configuration: stub.configuration(storeDirectory: after.url))
        let events = EventRecorder(reinstalled)
        #expect(reinstalled.deviceID != first.deviceID)
        await reinstalled.register(pushToStartToken: Data([0xAB]), for: "GameAttributes")
        try await idle(reinstalled)
        try await eventually("the delivery") { !events.events(.delivered).isEmpty }
        #expect(events.events(.dropped).isEmpty, "\(events.events)")
        #expect(events.events(.retrying).map(\.status) == [409])
        let tries = stub.requests.filter { $0.headers["livecast-device-id"] == reinstalled.deviceID }
        #expect(tries.count == 2 && tries.allSatisfy { $0.string("token") == "ab" })
        #expect(holders.withLock { $0["ab"] } == reinstalled.deviceID)
        await reinstalled.shutdown()
    }

    @Test func oneTokenForTwoAttributesTypesIsRegisteredUnderBoth() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0xAB]), for: "GameAttributes")
        await client.register(pushToStartToken: Data([0xAB]), for: "OrderAttributes")
        try await idle(client)
        let device = try #require(client.deviceID)
        #expect(
            Set(stub.requests.map(\.route)) == [
                "PUT /push-to-start-tokens/\(device)/GameAttributes", "PUT /push-to-start-tokens/\(device)/OrderAttributes",
            ]
        )
        try await eventually("both deliveries") { events.events(.delivered).count == 2 }
        await client.shutdown()
    }

    @Test func aTokenLivecastKeepsForAnotherHolderIsDroppedSayingWhy() async throws {
        let stub = StubLivecast { _, _ in .error(409, "conflict", "another device holds this token and keeps it", field: "token") }
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0xAB]), for: "GameAttributes")
        try await idle(client)
        try await eventually("the drop") { !events.events(.dropped).isEmpty }
        let dropped = try #require(events.events(.dropped).first)
        #expect(dropped.dropReason == .tokenTaken && dropped.status == 409 && dropped.errorCode == "conflict")
        #expect(dropped.message == "another device holds this token and keeps it")
        #expect(dropped.description.contains("[tokenTaken]"))
        #expect(stub.requests.count == 1, "an answer that can never succeed is not tried again")
        await client.shutdown()
    }

    @Test func aDeviceAtItsCapHoldsTheTokenUntilRoomIsMade() async throws {
        let stub = StubLivecast { request, _ in
            request.method == "PUT" && request.path.hasSuffix("/OrderAttributes")
                ? .error(409, "device_limit_reached", "this device has 1 live push-to-start tokens", field: "attributesType") : nil
        }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        await client.register(pushToStartToken: Data([0x01]), for: "GameAttributes")
        await client.register(pushToStartToken: Data([0x02]), for: "OrderAttributes")
        try await eventually("the hold") { !events.events(.held).isEmpty }
        let held = try #require(events.events(.held).first)
        #expect(held.status == 409 && held.errorCode == "device_limit_reached" && (held.retryDelay ?? .zero) >= .seconds(60))
        try await eventually("only the held token kept") {
            await client.pendingReports.map(\.description) == ["push-to-start token for OrderAttributes"]
        }

        // The device gives up a type: room is made, and the held token goes at once (not after its two minutes).
        stub.answer { _, _ in nil }
        let removed = ContinuousClock.now
        await client.unregister(pushToStartTokenFor: "GameAttributes")
        try await idle(client)
        #expect(ContinuousClock.now - removed < .seconds(30))
        #expect(stub.requests.last?.route == "PUT /push-to-start-tokens/\(client.deviceID ?? "")/OrderAttributes")
        #expect(events.events(.dropped).isEmpty, "\(events.events)")
        await client.shutdown()
    }

    @Test func aHeldReportNeverHoldsUpTheDevicesUnregistration() async throws {
        let stub = StubLivecast { request, _ in
            request.method == "PUT" ? .error(409, "device_limit_reached", "this device has 32 running activities", field: "activityId") : nil
        }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        await client.register(activity: LivecastActivity(id: "A1", attributesType: "GameAttributes"), updateToken: Data([0x0A]))
        try await eventually("the hold") { !events.events(.held).isEmpty }
        await client.unregisterDevice()
        try await idle(client)
        #expect(stub.requests.map(\.route) == ["PUT /activities/A1", "DELETE /devices/\(client.deviceID ?? "")"])
        try await eventually("the drop") { !events.events(.dropped).isEmpty }
        #expect(events.events(.dropped).map(\.dropReason) == [.deviceUnregistered])
        await client.shutdown()
    }

    @Test func aHeldRegistrationGivesWayToTheActivitysEnd() async throws {
        let stub = StubLivecast { request, _ in
            request.method == "PUT" ? .error(404, "not_found", "no feed game-9 that an activity of this type can follow", field: "feed") : nil
        }
        let directory = try TemporaryDirectory()
        let client = try Self.slowClient(stub, directory)
        let events = EventRecorder(client)
        let activity = LivecastActivity(id: "A1", attributesType: "GameAttributes", feed: "game-9")
        await client.register(activity: activity, updateToken: Data([0x0A]))
        try await eventually("the hold") { !events.events(.held).isEmpty }

        await client.activityEnded("A1")
        try await idle(client)
        #expect(stub.requests.map(\.route) == ["PUT /activities/A1", "DELETE /activities/A1"], "the end replaced the held registration")
        #expect(events.events(.dropped).isEmpty && events.events(.delivered).count == 1, "\(events.events)")
        await client.shutdown()
    }
}
