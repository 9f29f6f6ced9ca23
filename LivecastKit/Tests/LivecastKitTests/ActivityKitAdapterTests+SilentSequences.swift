#if os(Linux)
import ActivityKitStandIn
import Foundation
import Testing

@testable import LivecastKit

extension ActivityKitAdapterTests {
    /// On some devices `pushToStartTokenUpdates` and `frequentPushEnablementUpdates` yield nothing: the adapter reads
    /// `Activity.pushToStartToken` and `frequentPushesEnabled` themselves at launch and at every `resume()`. Nested, so
    /// it runs one test at a time with the other stand-in tests.
    @Suite struct SilentSequences {
        struct QuietAttributes: ActivityAttributes {
            struct ContentState: Codable, Hashable {}
        }

        init() { ActivityKitControl.reset() }

        @Test func thePushToStartTokenAndTheSettingAreReadAtLaunchAndOnResume() async throws {
            ActivityKitControl.setSequencesSilent(true)
            ActivityKitControl.setFrequentPushesEnabled(true)
            ActivityKitControl.setPushToStartToken(Data([0x71]), for: QuietAttributes.self)
            let stub = StubLivecast()
            let directory = try TemporaryDirectory()
            let client = try LivecastClient(configuration: stub.configuration(storeDirectory: directory.url))
            let device = try #require(client.deviceID)
            let observation = Livecast.observe(QuietAttributes.self, client: client)
            try await eventually("the token read at launch") { stub.requests.count == 1 }
            #expect(stub.requests.last?.route == "PUT /push-to-start-tokens/\(device)/QuietAttributes")
            #expect(stub.requests.last?.string("token") == "71" && stub.requests.last?.bool("frequentUpdatesEnabled") == true)

            // The token rotates and the user turns frequent updates off; neither sequence says a word.
            ActivityKitControl.setPushToStartToken(Data([0x72]), for: QuietAttributes.self)
            ActivityKitControl.setFrequentPushesEnabled(false)
            try await Task.sleep(for: .milliseconds(200))
            #expect(stub.requests.count == 1)

            await client.resume()  // the app became active
            try await eventually("the values read on resume") { stub.requests.count == 2 }
            try await idle(client)
            #expect(stub.requests.count == 2, "one registration with both: \(stub.requests.map(\.route))")
            #expect(stub.requests.last?.string("token") == "72" && stub.requests.last?.bool("frequentUpdatesEnabled") == false)

            observation.cancel()
            await observation.value
            await client.resume()
            try await Task.sleep(for: .milliseconds(100))
            #expect(stub.requests.count == 2, "nothing is read once the observation ended")
            await client.shutdown()
        }
    }
}
#endif
