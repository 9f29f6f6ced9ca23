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

    private static func register(_ keys: [String], _ fixture: StoreFixture, appID: Int64? = nil) async throws {
        let activities = Activities(client: fixture.client, logger: fixture.logger)
        for (index, key) in keys.enumerated() {
            _ = try await activities.register(
                .init(appID: appID ?? fixture.appID, activityKey: key, attributesType: "OrderAttributes", pushToken: String(format: "ab%04x", index))
            )
        }
    }

    private static func update(
        _ fixture: StoreFixture,
        _ key: String,
        eta: Int,
        timestamp: Int? = nil,
        appID: Int64? = nil
    ) throws -> ActivityUpdates.Request {
        .init(
            appID: appID ?? fixture.appID,
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

    /// Updates with an idempotency key go in batches too (`sql/0029`): the key is stored with the row, a retried
    /// request is answered as the first time (in a later batch, or in the same batch after its first), and a key
    /// reused for another body is refused, before any other rule is applied.
    @Test func aBatchStoresIdempotencyKeysAndReplaysARetriedRequest() async throws {
        try await StoreFixture.with("update_queue_idempotency") { fixture in
            try await Self.register(["k0", "k1", "k2"], fixture)
            func keyed(_ activity: String, key: String, body: String = "{}", eta: Int) throws -> ActivityUpdates.Request {
                var request = try Self.update(fixture, activity, eta: eta)
                request.content.idempotencyKey = IdempotencyKey(key: key, scope: "POST /\(activity)/updates", body: Array(body.utf8))
                return request
            }
            let first = try await ActivityUpdateBatch.write(
                [try keyed("k0", key: "a", eta: 1), try keyed("k1", key: "b", eta: 1), try Self.update(fixture, "k2", eta: 1)],
                client: fixture.client,
                logger: fixture.logger
            ).map { try $0.get() }
            #expect(first.allSatisfy { !$0.isReplay })
            let stored = try await fixture.client.query(
                "SELECT id, idempotency_key, idempotency_scope FROM updates WHERE idempotency_key IS NOT NULL ORDER BY id"
            )
            var keys: [String] = []
            for try await (id, key, scope) in stored.decode((Int64, String, String).self) {
                keys.append("\(id == first[keys.count].updateID) \(key) \(scope)")
            }
            #expect(keys == ["true a POST /k0/updates", "true b POST /k1/updates"])
            // The retried request comes after its activity was ended: it is still answered as the first time.
            let ends = ActivityUpdates(client: fixture.client, logger: fixture.logger)
            _ = try await ends.accept(.init(appID: fixture.appID, activityKey: "k0", event: .end))
            let second = await ActivityUpdateBatch.write(
                [
                    try keyed("k0", key: "a", eta: 1), try keyed("k1", key: "b", body: "{ }", eta: 1),
                    try keyed("k2", key: "c", eta: 2), try keyed("k2", key: "c", eta: 2),
                ],
                client: fixture.client,
                logger: fixture.logger
            )
            let replay = try second[0].get()
            #expect(replay.isReplay && replay.updateID == first[0].updateID && replay.timestamp == first[0].timestamp)
            // The answers the batch kept with its rows are the first answers' bytes.
            #expect(replay.answer == first[0].answer && replay.answer.contains(#""updateId":\#(first[0].updateID)"#), "\(replay.answer)")
            let reused = #expect(throws: StoreError.self) { try second[1].get() }
            #expect(reused?.code == .idempotencyKeyReused)
            let (new, again) = (try second[2].get(), try second[3].get())
            #expect(!new.isReplay && again.isReplay && again.updateID == new.updateID && again.answer == new.answer)
            let count = try await fixture.client.query("SELECT count(*)::int FROM updates WHERE idempotency_key IS NOT NULL")
            #expect(try await count.decode(Int.self).reduce(0) { $1 } == 3)
        }
    }

    /// A batch spends each app's hourly priority-10 budget once for all of its updates asking for 10 (`sql/0028`):
    /// the first of them, in the requests' order, go out at 10 while the budget lasts and the rest at 5, as if each
    /// had spent one unit in turn; an app without a cap grants them all, and priority 5 spends nothing.
    @Test func aBatchSpendsEachAppsPriorityTenBudgetInTheRequestsOrder() async throws {
        try await StoreFixture.with("update_queue_priority_budget") { fixture in
            try await fixture.client.query("UPDATE apps SET priority10_hourly_cap = 2 WHERE id = \(fixture.appID)")
            let uncapped = try await fixture.client.query(
                "INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path) VALUES ('com.example.news', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/b.p8') RETURNING id"
            )
            let otherApp = try await uncapped.decode(Int64.self).reduce(0) { $1 }
            try await Self.register(["a0", "a1", "a2", "a3", "a4", "a5"], fixture)
            try await Self.register(["b0", "b1"], fixture, appID: otherApp)
            func request(_ key: String, priority: Int, appID: Int64? = nil, eta: Int) throws -> ActivityUpdates.Request {
                var request = try Self.update(fixture, key, eta: eta, appID: appID)
                request.content.priority = priority
                return request
            }
            // The budget is the clock hour's: should the hour turn between the two batches (a slow run near the top
            // of the hour), both go again on an unspent budget, with updates after the first try's.
            var first: [AcceptedUpdate] = []
            var second: [AcceptedUpdate] = []
            for attempt in 0..<2 {
                try await fixture.client.query("DELETE FROM priority_budget")
                try await fixture.client.query("DELETE FROM updates")
                let hour = try await fixture.databaseHour()
                first = try await ActivityUpdateBatch.write(
                    [
                        try request("a0", priority: 10, eta: attempt), try request("b0", priority: 10, appID: otherApp, eta: attempt),
                        try request("a1", priority: 5, eta: attempt), try request("a2", priority: 10, eta: attempt),
                        try request("b1", priority: 10, appID: otherApp, eta: attempt), try request("a3", priority: 10, eta: attempt),
                    ],
                    client: fixture.client,
                    logger: fixture.logger
                ).map { try $0.get() }
                second = try await ActivityUpdateBatch.write(
                    [try request("a4", priority: 10, eta: attempt), try request("a5", priority: 5, eta: attempt)],
                    client: fixture.client,
                    logger: fixture.logger
                ).map { try $0.get() }
                if try await fixture.databaseHour() == hour { break }
            }
            #expect(first.map(\.priority) == [10, 10, 5, 10, 10, 5])
            #expect(first.map(\.priorityDowngraded) == [false, false, false, false, false, true])
            #expect(second.map(\.priority) == [5, 5] && second.map(\.priorityDowngraded) == [true, false])
            let rows = try await fixture.client.query("SELECT app_id, used FROM priority_budget ORDER BY app_id")
            var used: [Int64: Int] = [:]
            for try await (appID, count) in rows.decode((Int64, Int).self) { used[appID] = count }
            #expect(used == [fixture.appID: 2, otherApp: 2])
            // What the outbox holds is what each caller was told.
            let sent = try await fixture.client.query(
                "SELECT a.activity_key, u.priority FROM updates u JOIN activities a ON a.id = u.activity_id WHERE u.status = 'pending' ORDER BY a.activity_key"
            )
            var priorities: [String] = []
            for try await (key, priority) in sent.decode((String, Int16).self) { priorities.append("\(key) \(priority)") }
            #expect(priorities == ["a0 10", "a1 5", "a2 10", "a3 5", "a4 5", "a5 5", "b0 10", "b1 10"])
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
