import Foundation
import Testing

@testable import LivecastKit

/// Live registrations are reported again every `reReportInterval` (7 days), so that Livecast, which expires a
/// push-to-start token 30 days after its last registration, keeps them.
@Suite struct ReReportTests {
    private static let token = Data([0xAA, 0x01])

    /// Registers the token with a first client, acknowledged at the clock's time, and shuts it down.
    private static func reportOnce(_ stub: StubLivecast, _ directory: TemporaryDirectory, _ clock: TestClock) async throws {
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url, now: clock.function))
        await client.register(pushToStartToken: Self.token, for: "GameAttributes")
        try await idle(client)
        await client.shutdown()
        #expect(stub.requests.count == 1)
    }

    @Test func aTokenReportedEightDaysAgoIsReportedAgainAtLaunch() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        try await Self.reportOnce(stub, directory, clock)

        clock.advance(days: 8)
        let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url, now: clock.function))
        let events = EventRecorder(relaunched)
        try await eventually("the re-report") { stub.requests.count == 2 }
        try await idle(relaunched)
        let again = try #require(stub.requests.last)
        #expect(again.route == "PUT /push-to-start-tokens/\(relaunched.deviceID ?? "")/GameAttributes" && again.string("token") == "aa01")
        #expect(events.events(.delivered).map(\.status) == [200], "Livecast answered unchanged, and refreshed it")

        // Acknowledged again now: a token registered the same day is not sent.
        await relaunched.register(pushToStartToken: Self.token, for: "GameAttributes")
        await relaunched.resume()
        #expect(await relaunched.pendingReports.isEmpty)
        #expect(stub.requests.count == 2)
        await relaunched.shutdown()
    }

    @Test func aTokenReportedYesterdayIsNotReportedAgain() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        try await Self.reportOnce(stub, directory, clock)

        clock.advance(days: 1)
        let relaunched = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url, now: clock.function))
        await relaunched.register(pushToStartToken: Self.token, for: "GameAttributes")
        await relaunched.resume()
        try await Task.sleep(for: .milliseconds(200))
        #expect(stub.requests.count == 1, "\(stub.requests.map(\.route))")
        #expect(await relaunched.pendingReports.isEmpty)
        await relaunched.shutdown()
    }

    @Test func aLongRunningAppReportsAgainWhenItResumesOrReports() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url, now: clock.function))
        await client.register(pushToStartToken: Self.token, for: "GameAttributes")
        await client.register(activity: LivecastActivity(id: "A1", attributesType: "GameAttributes"), updateToken: Data([0xBB]))
        try await idle(client)

        clock.advance(days: 7)
        await client.resume()
        try await idle(client)
        let routes = stub.requests.dropFirst(2).map(\.route).sorted()
        #expect(routes == ["PUT /push-to-start-tokens/\(client.deviceID ?? "")/GameAttributes"], "the activity was forgotten after a day")

        clock.advance(days: 7)
        await client.register(pushToStartToken: Data([0xCC]), for: "OrderAttributes")  // any report checks what is due
        try await idle(client)
        #expect(stub.requests.count == 5)
        #expect(Set(stub.requests.suffix(2).compactMap { $0.string("token") }) == ["aa01", "cc"])
        await client.shutdown()
    }

    @Test func aFileFromBeforeAcknowledgementTimesWereKeptIsDueAtOnce() throws {
        let json = #"""
            {"acknowledged":{"push-to-start\/GameAttributes":{"content":{"pushToStartToken":{"attributesType":"GameAttributes","token":"aa01"}}}},
             "deviceID":"d","nextSequence":1,"pending":[]}
            """#
        let state = try JSONDecoder().decode(PendingState.self, from: Data(json.utf8))
        #expect(state.acknowledged.values.map(\.at) == [.distantPast])
        #expect(state.dueReReports(now: Date(), interval: 7 * 24 * 3600).count == 1)
    }

    @Test func anIntervalAsLongAsLivecastsExpiryIsRefused() throws {
        let directory = try TemporaryDirectory()
        var configuration = StubLivecast().configuration(storeDirectory: directory.url)
        configuration.reReportInterval = .seconds(30 * 24 * 3600)
        #expect(throws: LivecastClient.ConfigurationError.self) { try LivecastClient(configuration: configuration) }
        configuration.reReportInterval = .zero
        #expect(throws: LivecastClient.ConfigurationError.self) { try LivecastClient(configuration: configuration) }
        configuration.reReportInterval = .seconds(29 * 24 * 3600)
        #expect(throws: Never.self) { try LivecastClient(configuration: configuration) }
    }
}
