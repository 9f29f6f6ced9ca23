import APNs
import APNsEmulator
import Foundation
import LivecastTesting
import Testing

/// The transport under load and under trouble.
@Suite struct TransportTests {
    private func pushes(_ count: Int) -> [DevicePush] {
        let payload = ClientFixture.update()
        return (0..<count).map { index in
            DevicePush(deviceToken: String(format: "%064x", index + 1), bundleID: ClientFixture.bundleID, payload: payload, priority: 5)
        }
    }

    @Test func tenThousandConcurrentRequestsOverThePool() async throws {
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }, client: { $0.connectionsPerEndpoint = 4; $0.requestTimeout = .seconds(120) }) { fixture in
            let outcomes = await fixture.client.send(self.pushes(10_000))
            #expect(outcomes.count == 10_000)
            #expect(outcomes.filter { $0.status != 200 }.count == 0)
            #expect(Set(outcomes.compactMap(\.apnsID)).count == 10_000)
            #expect(fixture.emulator.emulator.openConnections == 4)
        }
    }

    @Test func theFirstRequestsWaitForTheStreamLimitToRise() async throws {
        // APNs allows one stream until a request authenticates; a client that opened more would see them refused
        // (and retried: attempts 2). Every push going out once shows the client waited for the new SETTINGS.
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }, client: { $0.connectionsPerEndpoint = 1 }) { fixture in
            let outcomes = await fixture.client.send(self.pushes(300))
            #expect(outcomes.allSatisfy { $0.status == 200 })
            #expect(outcomes.allSatisfy { $0.attempts == 1 })
        }
    }

    @Test func goAwayAndDroppedConnectionsMidLoadLoseNoRequest() async throws {
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true }, client: { $0.connectionsPerEndpoint = 2; $0.requestTimeout = .seconds(120) }) { fixture in
            let emulator = fixture.emulator.emulator
            async let outcomes = fixture.client.send(self.pushes(4_000))
            var goAways = 0
            var drops = 0
            for round in 0..<6 {
                try await Task.sleep(for: .milliseconds(150))
                if round % 2 == 0 { goAways += emulator.sendGoAway(reason: "Shutdown") } else { drops += emulator.dropConnections() }
            }
            let results = await outcomes
            #expect(goAways > 0)
            #expect(drops > 0)
            #expect(results.count == 4_000)
            let failed = results.filter { $0.status != 200 }
            #expect(failed.isEmpty, "\(failed.prefix(3))")
            #expect(results.contains { $0.attempts > 1 })
        }
    }

    @Test func scriptedGoAwayAndDropAreRetriedOnNewConnections() async throws {
        try await ClientFixture.with(emulator: { $0.acceptsUnknownTokens = true; $0.faults.script = [.goAway(reason: "Shutdown"), .drop] }) { fixture in
            let outcome = await fixture.client.send(self.pushes(1)[0])
            #expect(outcome.status == 200)
            #expect(outcome.attempts == 3)
        }
    }
}
