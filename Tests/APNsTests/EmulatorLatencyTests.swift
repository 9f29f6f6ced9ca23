import APNs
import APNsEmulator
import Foundation
import LivecastTesting
import Testing

/// The emulator's latency (`--latency`): read as a time and a jitter, each answer waits it while the streams of a
/// connection overlap, and the wire records every request.
@Suite struct EmulatorLatencyTests {
    @Test func latencyIsReadAsATimeAndAJitter() {
        #expect(EmulatorLatency(text: "40ms") == EmulatorLatency(base: .milliseconds(40)))
        #expect(EmulatorLatency(text: "40ms±10ms") == EmulatorLatency(base: .milliseconds(40), jitter: .milliseconds(10)))
        #expect(EmulatorLatency(text: "0.5s+-5ms") == EmulatorLatency(base: .milliseconds(500), jitter: .milliseconds(5)))
        #expect(EmulatorLatency(text: "40ms±10ms")?.description == "40ms±10ms")
        for bad in ["", "40", "fast", "40ms±", "-1ms", "61s", "40ms±10ms±1ms", "ms"] {
            #expect(EmulatorLatency(text: bad) == nil, "\(bad)")
        }
    }

    @Test func eachAnswerWaitsWhileTheStreamsOverlap() async throws {
        let latency = Duration.milliseconds(300)
        try await ClientFixture.with(emulator: {
            $0.latency = EmulatorLatency(base: latency)
            $0.acceptsUnknownTokens = true
            $0.recordsWire = true
        }) { fixture in
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            #expect(await fixture.client.send(push).isSuccess, "the connection is up")
            let count = 20
            let start = ContinuousClock.now
            let durations = await withTaskGroup(of: (Bool, Duration).self) { group in
                for _ in 0..<count {
                    group.addTask {
                        let sent = ContinuousClock.now
                        let outcome = await fixture.client.send(push)
                        return (outcome.isSuccess, ContinuousClock.now - sent)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = ContinuousClock.now - start
            #expect(durations.allSatisfy { $0.0 })
            #expect(durations.allSatisfy { $0.1 >= latency }, "every answer waited: \(durations.map(\.1))")
            // One after the other they would take 6 s; overlapping on the connection's streams, about one latency.
            #expect(elapsed < latency * count / 2, "\(elapsed)")
            #expect(fixture.emulator.emulator.wireRecords.count == count + 1)
        }
    }
}

/// APNs lowers `MAX_CONCURRENT_STREAMS` mid-connection after refusals: the client follows without failing a request.
@Suite struct StreamLimitTests {
    @Test func aLoweredStreamLimitIsFollowedWithoutFailingARequest() async throws {
        let latency = Duration.milliseconds(200)
        try await ClientFixture.with(
            emulator: {
                $0.latency = EmulatorLatency(base: latency)
                $0.acceptsUnknownTokens = true
                $0.recordsWire = true
            },
            client: { $0.connectionsPerEndpoint = 1 }
        ) { fixture in
            let push = DevicePush(deviceToken: "abcd", bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            #expect(await fixture.client.send(push).isSuccess, "the connection is up")
            // 40 pushes in flight when the limit drops to 2.
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<40 { group.addTask { await fixture.client.send(push).isSuccess } }
                try? await Task.sleep(for: .milliseconds(50))
                #expect(fixture.emulator.emulator.limitStreams(to: 2) == 1)
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 }, "no request failed: \(outcomes.filter { !$0 }.count) did")
            #expect(fixture.emulator.emulator.wireRecords.count == 41, "each processed once")

            // Now two streams at a time: ten pushes take at least five latencies.
            let start = ContinuousClock.now
            let later = await fixture.client.send(Array(repeating: push, count: 10))
            #expect(later.allSatisfy { $0.isSuccess })
            #expect(ContinuousClock.now - start >= latency * 5, "\(ContinuousClock.now - start)")
        }
    }
}

/// An answer waiting out the latency when its connection drops never reaches the client: the wire log does not count
/// it as answered, so a judge does not take the client's re-send for a push after a `410` it never saw.
@Suite struct LostAnswerTests {
    @Test func anAnswerLostWithItsConnectionIsNotLoggedAsAnswered() async throws {
        let token = String(repeating: "ab", count: 32)
        try await ClientFixture.with(emulator: {
            $0.latency = EmulatorLatency(base: .seconds(2))
            $0.recordsWire = true
        }) { fixture in
            let emulator = fixture.emulator.emulator
            emulator.setFaults(FaultPlan(unregisteredTokens: [token: Int(Date().timeIntervalSince1970 * 1000)]))
            let push = DevicePush(deviceToken: token, bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            async let outcome = fixture.client.send(push)
            // The 410 is decided on arrival and waits out the latency; the connection drops meanwhile.
            try await eventually("the push to reach the emulator") { emulator.wireRecords.contains { $0.target == "device:\(token)" } }
            #expect(emulator.dropConnections() == 1)
            #expect(await outcome.status == 410, "the client sent it again and got the answer")
            let records = emulator.wireRecords.filter { $0.target == "device:\(token)" }
            #expect(records.map(\.status) == [nil, 410], "the lost answer is not logged: \(records.map(\.status))")
        }
    }
}
