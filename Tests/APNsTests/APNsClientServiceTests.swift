import APNs
import APNsEmulator
import LivecastTesting
import Logging
import ServiceLifecycle
import Testing

/// The client as a swift-service-lifecycle service.
@Suite struct APNsClientServiceTests {
    @Test func gracefulShutdownOfItsServiceGroupClosesTheConnections() async throws {
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }, client: { $0.connectionsPerEndpoint = 2 }) { fixture in
            let emulator = fixture.emulator.emulator
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            let group = ServiceGroup(services: [fixture.client], gracefulShutdownSignals: [], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                #expect(await fixture.client.send(push).status == 200)
                // One push opens one connection (another would open only while its streams are all busy).
                #expect(try await Self.waitUntil { emulator.openConnections == 1 })
                await group.triggerGracefulShutdown()
                // The group ends once the client's run() returned, which it does after closing its connections.
                try await tasks.waitForAll()
            }
            #expect(try await Self.waitUntil { emulator.openConnections == 0 })
            let refused = await fixture.client.send(push)
            #expect(refused.transportError?.code == .shutdown)
        }
    }

    private static func waitUntil(_ condition: @escaping @Sendable () -> Bool) async throws -> Bool {
        try await eventually(within: .seconds(10), "the client's state", condition)
        return condition()
    }
}
