import Foundation
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastStore

/// The priority-10 budget (docs/ARCHITECTURE.md, invariant 7; `spend_priority_budget`, `sql/0028`): each app may send
/// `apps.priority10_hourly_cap` pushes at priority 10 in a clock hour; updates asking for more are stored, and
/// claimed, at priority 5, and say so.
@Suite struct OutboxPriorityBudgetTests {
    /// `spend_priority_budget(app, wanted)` grants all that is wanted without a cap, else at most what is left of the
    /// hour's cap, and counts what it granted against the hour (in one transaction, so on one hour).
    @Test func spendPriorityBudgetGrantsWhatIsLeftOfTheHoursCap() async throws {
        try await StoreFixture.with("outbox_budget_spend") { fixture in
            let (granted, used) = try await fixture.client.withTransaction(logger: fixture.logger) { connection in
                func spend(_ wanted: Int32) async throws -> Int32 {
                    let rows = try await connection.query("SELECT spend_priority_budget(\(fixture.appID), \(wanted))", logger: fixture.logger)
                    for try await granted in rows.decode(Int32.self) { return granted }
                    return -1
                }
                var granted: [Int32] = []
                try await connection.query("UPDATE apps SET priority10_hourly_cap = NULL WHERE id = \(fixture.appID)", logger: fixture.logger)
                granted.append(try await spend(3))
                try await connection.query("UPDATE apps SET priority10_hourly_cap = 5 WHERE id = \(fixture.appID)", logger: fixture.logger)
                for wanted: Int32 in [1, 3, 1, 0] { granted.append(try await spend(wanted)) }
                let rows = try await connection.query(
                    "SELECT used FROM priority_budget WHERE app_id = \(fixture.appID) AND hour = date_trunc('hour', now())",
                    logger: fixture.logger
                )
                var used: Int32 = -1
                for try await count in rows.decode(Int32.self) { used = count }
                return (granted, used)
            }
            #expect(granted == [3, 1, 1, 0, 0])
            #expect(used == 5)
        }
    }

    /// A batch of standalone activity updates spends the budget in the requests' order: those asking for priority 10
    /// beyond it are stored downgraded to 5 (and answered so), a request at priority 5 spends nothing, and the
    /// dispatcher claims each at the priority it was stored with. The batch is one transaction, so it spends one hour.
    @Test func priorityTenBeyondTheBudgetIsClaimedAtPriorityFive() async throws {
        try await StoreFixture.with("outbox_budget_claimed") { fixture in
            try await fixture.client.query("UPDATE apps SET priority10_hourly_cap = 2 WHERE id = \(fixture.appID)")
            let keys = ["order-1", "order-2", "order-3", "order-4"]
            for key in keys { try await fixture.makeActivity(key) }
            let now = try await fixture.databaseNow()
            let requests = try zip(keys, [10, 5, 10, 10]).map { key, priority in
                try fixture.activityUpdate(key, eta: 1, timestamp: now, priority: priority)
            }
            let answers = try await ActivityUpdateBatch.write(requests, client: fixture.client, logger: fixture.logger).map { try $0.get() }
            #expect(answers.map(\.priority) == [10, 5, 10, 5])
            #expect(answers.map(\.priorityDowngraded) == [false, false, false, true])

            let claims = try await fixture.outbox().claimActivityUpdates(batchSize: 10)
            let claimed = Dictionary(uniqueKeysWithValues: claims.map { ($0.updateID, $0.priority) })
            #expect(answers.map { claimed[$0.updateID] } == [10, 5, 10, 5])
        }
    }

    /// A feed update asking for priority 10 when the hour's budget is spent (a cap of 0, whatever the hour) fans
    /// out at priority 5, marked downgraded; one at priority 5 is never marked.
    @Test func aFeedUpdateBeyondTheBudgetFansOutAtPriorityFive() async throws {
        try await StoreFixture.with("outbox_budget_fan_out") { fixture in
            _ = try await fixture.makeFeed(followers: 1)
            try await fixture.client.query("UPDATE apps SET priority10_hourly_cap = 0 WHERE id = \(fixture.appID)")
            let now = try await fixture.databaseNow()
            let asked = try await fixture.acceptFeedUpdate(home: 1, timestamp: now, priority: 10)
            #expect(asked.priority == 5 && asked.priorityDowngraded)
            let outbox = fixture.outbox()
            let claim = try #require(try await outbox.claimFanOut(perApp: 2))
            #expect(claim.updateID == asked.updateID && claim.priority == 5)
            try await fixture.client.withConnection { connection in
                try await outbox.release(claim, status: .sent, on: connection)
            }
            let plain = try await fixture.acceptFeedUpdate(home: 2, timestamp: now + 10, priority: 5)
            #expect(plain.priority == 5 && !plain.priorityDowngraded)
        }
    }
}
