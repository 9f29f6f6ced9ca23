import APNs
import APNsEmulator
import LivecastTesting
import Testing

/// The client opens one connection per APNs host; a batch of a hundred pushes or more opens every connection it may
/// have (`connectionsPerEndpoint`, `apns-connections`), and so does a connection whose every stream is busy.
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

            let outcomes = await fixture.client.send(Array(repeating: push, count: 60))
            #expect(outcomes.allSatisfy { $0.isSuccess })
            #expect(fixture.emulator.emulator.openConnections == 3, "60 pushes on 10 streams a connection open the limit")
        }
    }

    /// A fan-out page on a server that allows far more streams than the page fills (APNs allows a thousand) is still
    /// spread over every connection from its first request: one connection carrying it all would stall the whole page
    /// when it drops.
    @Test func aBusyBatchOpensEveryConnectionAtOnceEvenWithStreamsToSpare() async throws {
        try await ClientFixture.with(
            emulator: {
                $0.acceptsUnknownTokens = true
                $0.maximumConcurrentStreams = 1_000
            },
            client: { $0.connectionsPerEndpoint = 3 }
        ) { fixture in
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            #expect(await fixture.client.send(push).isSuccess)
            let few = await fixture.client.send(Array(repeating: push, count: 20))
            #expect(few.allSatisfy { $0.isSuccess })
            #expect(fixture.emulator.emulator.openConnections == 1, "a few pushes, with streams to spare, keep one connection")

            let page = await fixture.client.send(Array(repeating: push, count: 300))
            #expect(page.allSatisfy { $0.isSuccess })
            #expect(fixture.emulator.emulator.openConnections == 3, "a page of 300 opens every connection")
        }
    }
}
