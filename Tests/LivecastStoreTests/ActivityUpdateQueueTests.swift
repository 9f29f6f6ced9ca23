import Foundation
import LivecastCore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastStore

/// Standalone activities' updates that arrive together are accepted together (group commit), each with its own
/// answer, and with the rules of an update accepted alone (`ActivityUpdatesTests` runs those on both paths).
@Suite struct ActivityUpdateQueueTests {
    private static let activityCount = 200

    private static func register(_ keys: [String], _ fixture: StoreFixture) async throws {
        let activities = Activities(client: fixture.client, logger: fixture.logger)
        for (index, key) in keys.enumerated() {
            _ = try await activities.register(
                .init(appID: fixture.appID, activityKey: key, attributesType: "OrderAttributes", pushToken: String(format: "ab%04x", index))
            )
        }
    }

    private static func update(_ fixture: StoreFixture, _ key: String, eta: Int, timestamp: Int? = nil) throws -> ActivityUpdates.Request {
        .init(
            appID: fixture.appID,
            activityKey: key,
            event: .update,
            contentState: try RawJSON(validating: #"{"eta":\#(eta)}"#),
            timestamp: timestamp
        )
    }

    @Test func concurrentUpdatesShareTransactionsAndEachGetsItsOwnAnswer() async throws {
        try await StoreFixture.with("update_queue_group_commit") { fixture in
            let keys = (0..<Self.activityCount).map { "order-\($0)" }
            try await Self.register(keys, fixture)
            let queue = ActivityUpdateQueue(client: fixture.client, logger: fixture.logger)
            let accepted = try await withThrowingTaskGroup(of: (String, AcceptedUpdate).self) { group in
                for (index, key) in keys.enumerated() {
                    group.addTask { (key, try await queue.accept(try Self.update(fixture, key, eta: index))) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(Set(accepted.values.map(\.updateID)).count == Self.activityCount)
            let rows = try await fixture.client.query(
                """
                SELECT a.activity_key, u.id, u.timestamp, a.last_timestamp, u.content_state, u.xmin::text FROM updates u
                JOIN activities a ON a.id = u.activity_id WHERE u.status = 'pending'
                """
            )
            var transactions = Set<String>()
            var stored = 0
            for try await (key, updateID, timestamp, last, contentState, transaction) in rows.decode((String, Int64, Int, Int, String, String).self) {
                let answer = accepted[key]
                #expect(answer?.updateID == updateID, "\(key)")
                #expect(answer?.timestamp == timestamp && last == timestamp, "\(key)")
                #expect(contentState == #"{"eta":\#(keys.firstIndex(of: key) ?? -1)}"#, "\(key)")
                transactions.insert(transaction)
                stored += 1
            }
            #expect(stored == Self.activityCount)
            #expect(transactions.count <= Self.activityCount / 4, "\(stored) updates took \(transactions.count) transactions")
        }
    }

    @Test func aBatchRefusesEachBadRequestAloneAndOrdersUpdatesOfOneActivity() async throws {
        try await StoreFixture.with("update_queue_mixed") { fixture in
            try await Self.register(["fine", "ended", "ahead", "big"], fixture)
            let alone = ActivityUpdates(client: fixture.client, logger: fixture.logger)
            let now = Int(Date().timeIntervalSince1970)
            _ = try await alone.accept(.init(appID: fixture.appID, activityKey: "ended", event: .end))
            _ = try await alone.accept(try Self.update(fixture, "ahead", eta: 0, timestamp: now + 100))
            try await fixture.client.query("UPDATE updates SET status = 'sent'")
            let oversize = try Self.update(fixture, "big", eta: 0)
            var big = oversize
            big.content.contentState = try RawJSON(validating: #"{"p":"\#(String(repeating: "x", count: 4100))"}"#)
            let requests = [
                try Self.update(fixture, "fine", eta: 1, timestamp: now),
                try Self.update(fixture, "ghost", eta: 1),
                try Self.update(fixture, "ended", eta: 1),
                try Self.update(fixture, "ahead", eta: 1, timestamp: now),
                big,
                try Self.update(fixture, "fine", eta: 2, timestamp: now),
            ]
            let answers = await ActivityUpdateBatch.write(requests, client: fixture.client, logger: fixture.logger)
            let codes = answers.map { answer -> String in
                switch answer {
                case .success: "accepted"
                case .failure(let error): (error as? StoreError).map { "\($0.code)" } ?? "\(error)"
                }
            }
            #expect(codes == ["accepted", "not_found", "activity_ended", "stale_timestamp", "payload_too_large", "accepted"])
            // The second update of "fine" came in the same second as the first, still waiting: it took its place and
            // its timestamp, after the first was committed.
            let first = try answers[0].get()
            let second = try answers[5].get()
            #expect(first.timestamp == now && second.timestamp == now && second.coalesced && second.updateID > first.updateID)
            let rows = try await fixture.client.query(
                "SELECT a.activity_key, u.status, u.content_state FROM updates u JOIN activities a ON a.id = u.activity_id WHERE u.status <> 'sent' ORDER BY u.id"
            )
            var stored: [String] = []
            for try await (key, status, contentState) in rows.decode((String, String, String?).self) {
                stored.append("\(key) \(status) \(contentState ?? "-")")
            }
            #expect(stored == [#"fine superseded {"eta":1}"#, #"fine pending {"eta":2}"#])
        }
    }

    /// A shared transaction that fails as a whole (here a deadlock, raised by a trigger on the batch's insert of one
    /// activity's update) keeps nothing; each of its callers then writes its update again alone, once.
    @Test func theCallersOfASharedTransactionThatFailedWriteTheirUpdatesAgainAlone() async throws {
        try await StoreFixture.with("update_queue_write_alone") { fixture in
            let keys = (0..<20).map { "order-\($0)" }
            try await Self.register(keys, fixture)
            try await fixture.client.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE FUNCTION deadlock_the_batch() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN
                            IF current_query() LIKE '%jsonb_to_recordset%' THEN
                                RAISE EXCEPTION 'a deadlock, for the test' USING ERRCODE = '40P01';
                            END IF;
                            RETURN NEW;
                        END $$
                        """
                )
            )
            let first = try await fixture.client.query("SELECT id FROM activities WHERE activity_key = 'order-0'")
            let firstID = try await first.decode(Int64.self).reduce(0) { $1 }
            try await fixture.client.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TRIGGER deadlock_the_batch BEFORE INSERT ON updates FOR EACH ROW
                        WHEN (NEW.activity_id = \(firstID)) EXECUTE FUNCTION deadlock_the_batch()
                        """
                )
            )
            let queue = ActivityUpdateQueue(client: fixture.client, logger: fixture.logger)
            let accepted = try await withThrowingTaskGroup(of: (String, AcceptedUpdate).self) { group in
                for (index, key) in keys.enumerated() {
                    group.addTask { (key, try await queue.accept(try Self.update(fixture, key, eta: index))) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            let rows = try await fixture.client.query(
                "SELECT a.activity_key, u.id FROM updates u JOIN activities a ON a.id = u.activity_id ORDER BY u.id"
            )
            var stored: [String: [Int64]] = [:]
            for try await (key, updateID) in rows.decode((String, Int64).self) { stored[key, default: []].append(updateID) }
            #expect(stored.count == keys.count && stored.values.allSatisfy { $0.count == 1 }, "\(stored)")
            for key in keys { #expect(stored[key] == accepted[key].map { [$0.updateID] }, "\(key)") }
        }
    }
}
