import Foundation
import Testing

@testable import LivecastKit

/// The core's observations: an activity's tasks end with it, and the frequent-updates setting is followed.
@Suite(.timeLimit(.minutes(1))) struct ObservationTests {
    @Test func anActivitysObservationEndsWithIt() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let (tokens, tokenSink) = AsyncStream.makeStream(of: Data.self)
        let (states, stateSink) = AsyncStream.makeStream(of: LivecastActivityState.self)
        let activity = LivecastActivity(id: "A1", attributesType: "GameAttributes")
        let observation = Task { await client.observe(activity: activity, updateTokens: tokens, states: states) }
        tokenSink.yield(Data([0x01]))
        try await eventually("the token") { stub.requests.count == 1 }
        #expect(await client.observedActivityIDs == ["A1"])

        stateSink.yield(.ended)
        try await eventually("the end") { stub.requests.count == 2 }
        tokenSink.yield(Data([0x02]))  // nobody listens any more: the token observation ended with the activity
        stateSink.yield(.dismissed)
        await observation.value  // returns: both sequences' tasks ended, though neither sequence finished
        try await idle(client)
        #expect(stub.requests.map(\.route) == ["PUT /activities/A1", "DELETE /activities/A1", "POST /activities/A1/dismissed"])
        #expect(await client.observedActivityIDs.isEmpty, "the id was released")
        tokenSink.finish()
        stateSink.finish()
        await client.shutdown()
    }

    @Test func everyPushToStartRegistrationCarriesTheLatestFrequentUpdatesSetting() async throws {
        let stub = StubLivecast()
        let directory = try TemporaryDirectory()
        let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
        let (tokens, tokenSink) = AsyncStream.makeStream(of: Data.self)
        let observation = Task { await client.observe(pushToStartTokens: tokens, attributesType: "GameAttributes", frequentUpdatesEnabled: true) }
        tokenSink.yield(Data([0x01]))
        try await eventually("the token") { stub.requests.count == 1 }
        await client.setFrequentUpdatesEnabled(false)
        try await eventually("the re-registration") { stub.requests.count == 2 }
        tokenSink.yield(Data([0x02]))
        try await eventually("the rotation") { stub.requests.count == 3 }
        try await idle(client)
        #expect(stub.requests.map { $0.bool("frequentUpdatesEnabled") } == [true, false, false])
        #expect(stub.requests.map { $0.string("token") } == ["01", "01", "02"])
        tokenSink.finish()
        await observation.value
        await client.shutdown()
    }
}
