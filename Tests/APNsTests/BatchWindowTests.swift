import APNs
import APNsEmulator
import Foundation
import LivecastTesting
import Testing

/// A batch is handed to the connections 500 requests per connection at a time; the rest are made as answers come in,
/// so a page of thousands of pushes never holds all its requests in memory at once.
@Suite struct BatchWindowTests {
    /// With APNs answering after 300 ms and room for 2,000 streams on the one connection, no more than the window's
    /// 500 requests can reach APNs before the first answer; every push of the batch still goes, once, and is answered.
    @Test func aBatchLargerThanItsWindowIsSentAsAnswersComeIn() async throws {
        let latency = 0.3
        try await ClientFixture.with(
            emulator: {
                $0.latency = EmulatorLatency(base: .milliseconds(Int64(latency * 1000)))
                $0.acceptsUnknownTokens = true
                $0.maximumConcurrentStreams = 2000
                $0.recordsWire = true
            },
            client: { $0.connectionsPerEndpoint = 1 }
        ) { fixture in
            let pushes = (0..<1500).map { index in
                DevicePush(deviceToken: String(format: "%064x", index), bundleID: ClientFixture.bundleID, payload: ClientFixture.update())
            }
            let outcomes = await fixture.client.send(pushes)
            #expect(outcomes.count == pushes.count)
            #expect(outcomes.allSatisfy { $0.isSuccess })

            let records = fixture.emulator.emulator.wireRecords
            #expect(Set(records.map(\.target)) == Set(pushes.map { "device:\($0.deviceToken)" }))
            #expect(records.count == pushes.count, "each push went once")
            let arrivals = records.map(\.arrivedAt).sorted()
            let first = try #require(arrivals.first)
            // A request past the window is made only once an answer came back, at least `latency` after the first.
            let beforeAnyAnswer = arrivals.prefix { $0 < first + latency * 0.9 }.count
            #expect(beforeAnyAnswer <= 500, "\(beforeAnyAnswer) requests arrived before any answer")
        }
    }
}
