import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// The transport under load and under trouble.
@Suite struct TransportTests {
    private func pushes(_ count: Int) -> [DevicePush] {
        let payload = ClientFixture.update()
        return (0..<count).map { index in
            DevicePush(
                deviceToken: String(format: "%064x", index + 1),
                bundleID: ClientFixture.bundleID,
                payload: payload,
                priority: .consideringDevicePower
            )
        }
    }

    @Test func tenThousandConcurrentRequestsOverThePool() async throws {
        try await ClientFixture.with(
            emulator: { $0.acceptsUnknownTokens = true },
            client: {
                $0.connectionsPerEndpoint = 4
                $0.requestTimeout = .seconds(120)
            }
        ) { fixture in
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
        try await ClientFixture.with(
            emulator: { $0.acceptsUnknownTokens = true },
            client: {
                $0.connectionsPerEndpoint = 1
                $0.requestTimeout = .seconds(120)
            }
        ) { fixture in
            let outcomes = await fixture.client.send(self.pushes(300))
            let unexpected = outcomes.filter { $0.status != 200 || $0.attempts != 1 }
            #expect(unexpected.count == 0, "first: \(unexpected.first.map { "\($0), attempts \($0.attempts)" } ?? "")")
        }
    }

    @Test func goAwayAndDroppedConnectionsMidLoadLoseNoRequest() async throws {
        // Two GOAWAYs and two dropped connections, each after another thousand requests: mid-load by construction.
        // At most 400 requests are in flight (two connections of 200 streams), fewer than arrive between two faults,
        // so no request is lost with three connections in a row (the client's `maximumAttempts`); with APNs' 1,000
        // streams a starved run could hold one request in flight across three faults, and it failed, as designed.
        let pass = Array(repeating: FaultAnswer.pass, count: 1000)
        let script = pass + [.goAway(reason: "Shutdown")] + pass + [.drop] + pass + [.goAway(reason: "Shutdown")] + pass + [.drop]
        try await ClientFixture.with(
            emulator: {
                $0.acceptsUnknownTokens = true
                $0.maximumConcurrentStreams = 200
                $0.faults.script = script
            },
            client: {
                $0.connectionsPerEndpoint = 2
                $0.requestTimeout = .seconds(120)
            }
        ) { fixture in
            let results = await fixture.client.send(self.pushes(6_000))
            #expect(fixture.emulator.emulator.faults.script.isEmpty)
            #expect(results.count == 6_000)
            let failed = results.filter { $0.status != 200 }
            #expect(failed.count == 0, "first failure: \(failed.first.map { "\($0)" } ?? "")")
            #expect(results.contains { $0.attempts > 1 })
        }
    }

    @Test func scriptedGoAwayAndDropAreRetriedOnNewConnections() async throws {
        try await ClientFixture.with(
            emulator: {
                $0.acceptsUnknownTokens = true
                $0.faults.script = [.goAway(reason: "Shutdown"), .drop]
            },
            client: { $0.requestTimeout = .seconds(60) }
        ) { fixture in
            let outcome = await fixture.client.send(self.pushes(1)[0])
            #expect(outcome.status == 200, "\(outcome)")
            #expect(outcome.attempts == 3)
        }
    }

    @Test(arguments: ["goaway", "drop"])
    func connectionsEndedByTheEmulatorAreReplaced(_ how: String) async throws {
        try await ClientFixture.with(
            emulator: { $0.acceptsUnknownTokens = true },
            client: {
                $0.connectionsPerEndpoint = 1
                $0.requestTimeout = .seconds(60)
            }
        ) { fixture in
            let emulator = fixture.emulator.emulator
            #expect(await fixture.client.send(self.pushes(1)[0]).status == 200)
            #expect(emulator.openConnections == 1)
            // The emulator's Swift API sends GOAWAY; its control plane (through curl) drops connections.
            let ended: Int
            if how == "goaway" {
                ended = emulator.sendGoAway(reason: "Shutdown")
            } else {
                let (status, json) = try await fixture.emulator.control("POST", "connections/drop")
                #expect(status == 200)
                ended = json["connections"]?.intValue ?? 0
            }
            #expect(ended == 1)
            // The pool replaces the connection at once; a push racing the old connection's end is sent again.
            let next = await fixture.client.send(self.pushes(1)[0])
            #expect(next.status == 200)
            #expect(next.attempts <= 2)
            // The old connection is gone and the pool keeps exactly its one connection.
            let deadline = ContinuousClock.now + .seconds(10)
            while emulator.openConnections != 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(emulator.openConnections == 1)
        }
    }

    @Test func idleConnectionsArePinged() async throws {
        try await ClientFixture.with(
            emulator: { $0.acceptsUnknownTokens = true },
            client: {
                $0.connectionsPerEndpoint = 1
                $0.idlePingInterval = .seconds(1)
            }
        ) { fixture in
            #expect(await fixture.client.send(self.pushes(1)[0]).status == 200)
            let deadline = ContinuousClock.now + .seconds(20)
            while fixture.emulator.emulator.receivedPings == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(fixture.emulator.emulator.receivedPings > 0)
            // The PING was answered: the connection is still the one in use.
            #expect(fixture.emulator.emulator.openConnections == 1)
            #expect(await fixture.client.send(self.pushes(1)[0]).attempts == 1)
        }
    }
}
