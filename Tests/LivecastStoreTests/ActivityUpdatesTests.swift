import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Accepting a standalone activity's updates into the outbox: ordering, coalescing, lifecycle, limits, idempotency.
@Suite struct ActivityUpdatesTests {
    private let now = 1_800_000_000

    /// The two ways in: one update alone (``ActivityUpdates``), and updates accepted together (``ActivityUpdateQueue``),
    /// which keeps the same rules.
    enum Path: String, CaseIterable, Sendable {
        case alone, queued
    }

    /// Accepts an update along one ``Path``.
    struct Acceptor: Sendable {
        let send: @Sendable (ActivityUpdates.Request) async throws -> AcceptedUpdate

        func accept(_ request: ActivityUpdates.Request) async throws -> AcceptedUpdate { try await self.send(request) }
    }

    private func activity(_ fixture: StoreFixture, _ path: Path) async throws -> Acceptor {
        _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
            .init(appID: fixture.appID, activityKey: "activity-1", attributesType: "GameAttributes", pushToken: "aa01")
        )
        switch path {
        case .alone: return Acceptor(send: ActivityUpdates(client: fixture.client, logger: fixture.logger).accept)
        case .queued: return Acceptor(send: ActivityUpdateQueue(client: fixture.client, logger: fixture.logger).accept)
        }
    }

    private func request(
        _ fixture: StoreFixture,
        _ event: LiveActivityEvent = .update,
        home: Int = 1,
        timestamp: Int? = nil
    ) throws -> ActivityUpdates.Request {
        .init(
            appID: fixture.appID,
            activityKey: "activity-1",
            event: event,
            contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
            timestamp: timestamp
        )
    }

    private func statuses(_ fixture: StoreFixture) async throws -> [(timestamp: Int, status: String)] {
        let rows = try await fixture.client.query("SELECT timestamp, status FROM updates ORDER BY id")
        var result: [(Int, String)] = []
        for try await row in rows.decode((Int, String).self) { result.append(row) }
        return result
    }

    @Test(arguments: Path.allCases) func updatesAreStoredWithTheDatabasesTimeAndPriorityFive(path: Path) async throws {
        try await StoreFixture.with("updates_accept_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            let before = Int(Date().timeIntervalSince1970)
            let accepted = try await updates.accept(try self.request(fixture))
            let after = Int(Date().timeIntervalSince1970)
            #expect((before...after).contains(accepted.timestamp), "not the database's clock (the same machine's)")
            #expect(accepted.priority == 5)
            var withAlert = try self.request(fixture, home: 2, timestamp: self.now + 5)
            withAlert.content.alert = LiveActivityAlert(title: "Goal!")
            #expect(try await updates.accept(withAlert).priority == 10)
            #expect(try await self.statuses(fixture).map(\.status) == ["pending", "pending"])
        }
    }

    @Test(arguments: Path.allCases) func olderTimestampsAreRefusedAndSameSecondUpdatesCoalesce(path: Path) async throws {
        try await StoreFixture.with("updates_order_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            _ = try await updates.accept(try self.request(fixture, timestamp: self.now))
            do {
                _ = try await updates.accept(try self.request(fixture, home: 9, timestamp: self.now - 1))
                Issue.record("an older update was accepted")
            } catch let error as StoreError {
                #expect(error.code == .staleTimestamp)
            }
            // Updates in the same second as one still waiting take its place and its timestamp (latest wins).
            let second = try await updates.accept(try self.request(fixture, home: 2))
            #expect(second.coalesced)
            #expect(second.timestamp == self.now)
            let third = try await updates.accept(try self.request(fixture, home: 3))
            #expect(third.timestamp == self.now)
            #expect(try await self.statuses(fixture).map(\.status) == ["superseded", "superseded", "pending"])
            // Once that one went out, the next in the same second waits for the next second, and those after it
            // replace it there: the timestamps never run more than a second ahead, however many come.
            try await fixture.client.query("UPDATE updates SET status = 'sent' WHERE status = 'pending'")
            for home in 4...9 {
                let later = try await updates.accept(try self.request(fixture, home: home))
                #expect(later.coalesced && later.timestamp == self.now + 1)
            }
            let rows = try await self.statuses(fixture)
            #expect(rows.map(\.timestamp) == [self.now, self.now, self.now] + Array(repeating: self.now + 1, count: 6))
            #expect(rows.map(\.status) == ["superseded", "superseded", "sent"] + Array(repeating: "superseded", count: 5) + ["pending"])
            // It is held until its second begins.
            let held = try await fixture.client.query("SELECT extract(epoch FROM not_before)::bigint FROM updates WHERE status = 'pending'")
            for try await notBefore in held.decode(Int.self) { #expect(notBefore == self.now + 1) }
        }
    }

    @Test(arguments: Path.allCases) func aNewerUpdateSupersedesItsActivitysOlderUpdatesInRetryOnly(path: Path) async throws {
        try await StoreFixture.with("updates_retried_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
                .init(appID: fixture.appID, activityKey: "activity-2", attributesType: "GameAttributes", pushToken: "aa02")
            )
            var other = try self.request(fixture, timestamp: self.now)
            other.targetKey = "activity-2"
            _ = try await updates.accept(other)
            _ = try await updates.accept(try self.request(fixture, timestamp: self.now))
            // APNs asked to retry both: pending again after a try.
            try await fixture.client.query("UPDATE updates SET attempts = 1")
            let newer = try await updates.accept(try self.request(fixture, home: 2, timestamp: self.now + 5))
            #expect(!newer.coalesced)
            // The activity's own update in retry is superseded; the other activity's stays pending.
            #expect(try await self.statuses(fixture).map(\.status) == ["pending", "superseded", "pending"])
        }
    }

    @Test(arguments: Path.allCases) func anEndClampsItsDismissalAndClosesTheActivity(path: Path) async throws {
        try await StoreFixture.with("updates_end_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            var end = try self.request(fixture, .end, home: 5, timestamp: self.now)
            end.content.dismissalDate = self.now + 10 * 3600
            let accepted = try await updates.accept(end)
            #expect(accepted.dismissalDateClamped)
            let stored = try await fixture.client.query("SELECT dismissal_date FROM updates WHERE id = \(accepted.updateID)")
            for try await dismissal in stored.decode(Int.self) { #expect(dismissal == self.now + 4 * 3600) }
            do {
                _ = try await updates.accept(try self.request(fixture, home: 6, timestamp: self.now + 10))
                Issue.record("an update after the end was accepted")
            } catch let error as StoreError {
                #expect(error.code == .activityEnded)
            }
            #expect(try await self.statuses(fixture).count == 1)
        }
    }

    @Test(arguments: Path.allCases) func oversizeAndMalformedUpdatesWriteNothing(path: Path) async throws {
        try await StoreFixture.with("updates_refused_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            let big = ActivityUpdates.Request(
                appID: fixture.appID,
                activityKey: "activity-1",
                event: .update,
                contentState: try RawJSON(validating: #"{"p":"\#(String(repeating: "x", count: 4100))"}"#)
            )
            do {
                _ = try await updates.accept(big)
                Issue.record("an oversize update was accepted")
            } catch let error as StoreError {
                #expect(error.code == .payloadTooLarge)
                #expect(error.message.contains("4096"))
            }
            var stale = try self.request(fixture, timestamp: self.now)
            stale.content.staleDate = self.now - 1
            await #expect(throws: StoreError.self) { try await updates.accept(stale) }
            var badPriority = try self.request(fixture)
            badPriority.content.priority = 7
            await #expect(throws: StoreError.self) { try await updates.accept(badPriority) }
            let unknown = ActivityUpdates.Request(
                appID: fixture.appID,
                activityKey: "nope",
                event: .update,
                contentState: try RawJSON(validating: "{}")
            )
            await #expect(throws: StoreError.self) { try await updates.accept(unknown) }
            #expect(try await self.statuses(fixture).isEmpty)
        }
    }

    @Test(arguments: Path.allCases) func aRetriedRequestWithTheSameIdempotencyKeyIsAnsweredAgainAndStoredOnce(path: Path) async throws {
        try await StoreFixture.with("updates_idempotency_\(path)") { fixture in
            let updates = try await self.activity(fixture, path)
            var request = try self.request(fixture, timestamp: self.now)
            request.content.idempotencyKey = IdempotencyKey(key: "retry-me", scope: "POST /a/updates", body: Array("{}".utf8))
            let first = try await updates.accept(request)
            let again = try await updates.accept(request)
            #expect(again.isReplay)
            #expect(again.updateID == first.updateID)
            #expect(again.timestamp == first.timestamp)
            // The answer kept with the row is the first answer's bytes.
            #expect(again.answer == first.answer && again.answer.contains(#""updateId":\#(first.updateID)"#), "\(again.answer)")
            #expect(try await self.statuses(fixture).count == 1)

            var otherBody = request
            otherBody.content.idempotencyKey = IdempotencyKey(key: "retry-me", scope: "POST /a/updates", body: Array("{ }".utf8))
            let reused = await #expect(throws: StoreError.self) { try await updates.accept(otherBody) }
            #expect(reused?.code == .idempotencyKeyReused)
            var otherScope = request
            otherScope.content.idempotencyKey = IdempotencyKey(key: "retry-me", scope: "POST /b/updates", body: Array("{}".utf8))
            let independent = try await updates.accept(otherScope)
            #expect(!independent.isReplay)
            #expect(try await self.statuses(fixture).count == 2)
        }
    }
}
