import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import NIOCore
import Testing

@testable import LivecastServer

/// Bulk imports weigh far more than one request (#56): one app's flood of imports is held to a slot at a time on a
/// server, so another app's updates and its own import go on meanwhile.
@Suite struct ImportFloodTests {
    @Test func aFloodOfImportsHoldsNeitherAnotherAppsUpdatesNorItsImport() async throws {
        try await APIFixture.with("import_flood") { fixture, client in
            // The other app: an activity to update, with its admin key (admins do what backends do).
            let other = "/v1/apps/com.example.other"
            let registered = try await client.send(
                .put,
                "\(other)/activities/act-1",
                key: fixture.otherKey,
                body: #"{"attributesType": "DeliveryAttributes", "pushToken": "aa01"}"#
            )
            #expect(registered.status == .created, "\(registered.text)")

            let flood = 6
            let started = ContinuousClock.now
            async let floodAnswers = withThrowingTaskGroup(of: TestResponse.self) { group in
                for batch in 0..<flood {
                    group.addTask {
                        try await client.execute(
                            uri: "/v1/apps/com.example.game/push-to-start-tokens:import",
                            method: .post,
                            headers: [.authorization: "Bearer \(fixture.key(.backend))", .contentType: "application/x-ndjson"],
                            body: ByteBuffer(string: Self.rows(10_000, batch: batch))
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Meanwhile the other app's updates, and its own import.
            var updateTimes: [Duration] = []
            for second in 1...10 {
                let asked = ContinuousClock.now
                let update = try await client.send(
                    .post,
                    "\(other)/activities/act-1/updates",
                    key: fixture.otherKey,
                    body: #"{"contentState": {"eta": \#(second)}, "timestamp": \#(Int(Date().timeIntervalSince1970) - 100 + second)}"#
                )
                updateTimes.append(ContinuousClock.now - asked)
                #expect(update.status == .accepted, "\(update.text)")
            }
            let otherImport = try await client.execute(
                uri: "\(other)/push-to-start-tokens:import",
                method: .post,
                headers: [.authorization: "Bearer \(fixture.otherKey)", .contentType: "application/x-ndjson"],
                body: ByteBuffer(string: Self.rows(1_000, batch: 99))
            )
            let answers = try await floodAnswers
            let elapsed = ContinuousClock.now - started

            let imported = answers.filter { $0.status == .ok }
            let refused = answers.filter { $0.status == .tooManyRequests }
            #expect(imported.count + refused.count == flood, "\(answers.map(\.status))")
            #expect(imported.count >= 1 && imported.count <= ImportSlots.perApp + 1, "one app's imports ran \(imported.count) at once")
            for answer in refused {
                #expect(answer.errorCode == "rate_limited" && answer.headers[.retryAfter] == String(ImportSlots.retryAfter))
            }
            #expect(otherImport.status == .ok, "the other app's import ran beside the flood: \(otherImport.text)")
            let slowest = try #require(updateTimes.max())
            print(
                "import flood: \(imported.count) imported, \(refused.count) refused (429) of \(flood) × 10,000 rows in \(elapsed); "
                    + "the other app's 10 updates answered in \(updateTimes.sorted()[4]) (median), \(slowest) (slowest)"
            )
            #expect(slowest < .seconds(30), "the other app's updates were starved: \(updateTimes)")
        }
    }

    /// NDJSON push-to-start rows for new devices.
    private static func rows(_ count: Int, batch: Int) -> String {
        (0..<count).map { index in
            #"{"deviceId": "flood-\#(batch)-\#(index)", "attributesType": "GameAttributes", "token": "\#(String(format: "%04x%08x", batch, index))"}"#
        }.joined(separator: "\n")
    }
}
