import APNs
import APNsEmulator
import LivecastTesting
import Testing

/// The client opens one connection per APNs host, and another only while every stream of one is busy, up to
/// `connectionsPerEndpoint` (`apns-connections`).
@Suite struct PoolGrowthTests {
    @Test func aQuietClientHoldsOneConnectionAndABusyOneOpensUpToItsLimit() async throws {
        try await ClientFixture.with(
            emulator: {
                $0.latency = EmulatorLatency(base: .milliseconds(100))
                $0.acceptsUnknownTokens = true
                $0.maximumConcurrentStreams = 10
            },
            client: { $0.connectionsPerEndpoint = 3 }
        ) { fixture in
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            for _ in 0..<5 { #expect(await fixture.client.send(push).isSuccess) }
            #expect(fixture.emulator.emulator.openConnections == 1, "one push at a time fills no connection")

            let outcomes = await fixture.client.send(Array(repeating: push, count: 200))
            #expect(outcomes.allSatisfy { $0.isSuccess })
            #expect(fixture.emulator.emulator.openConnections == 3, "200 pushes on 10 streams a connection open the limit")
        }
    }
}
