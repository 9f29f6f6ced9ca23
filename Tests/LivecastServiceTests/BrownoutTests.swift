import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import ServiceLifecycle
import Testing

/// An APNs brownout: 30 % of pushes refused with 503, GOAWAYs and dropped connections now and then. Every device
/// must end on the final score and ended, however many rounds that takes, and every token's timestamps increase at
/// the wire (the fixture's judge). How long it takes is the game-night benchmark's figure (`scripts/bench.sh
/// --gamenight`), printed here too.
@Suite struct BrownoutTests {
    private static let followerCount = 3000

    @Test(.timeLimit(.minutes(10))) func inABrownoutEveryDeviceEndsOnTheFinalScoreAndEnded() async throws {
        try await DispatchFixture.with("brownout") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(Self.followerCount, feed: "game-1")
            let settings = Dispatcher.Settings(pageSize: 500)
            let service = DispatcherService(
                dispatcher: fixture.dispatcher(settings),
                database: fixture.store.client,
                workers: 4,
                logger: fixture.store.logger
            )
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
            // 30 % refused: mostly 503, one in 300 of those a GOAWAY and one a dropped connection (answers lost).
            let refusals = Array(repeating: FaultAnswer.status(503, reason: "ServiceUnavailable"), count: 298) + [.goAway(reason: "Shutdown"), .drop]
            fixture.emulator.emulator.setFaults(FaultPlan(failureShare: 0.3, failureAnswers: refusals))
            let running = Task { try await group.run() }

            var updates: [AcceptedUpdate] = []
            for home in 1...4 {
                updates.append(try await fixture.update(feed: "game-1", home: home, timestamp: fixture.now + home))
                try await Task.sleep(for: .milliseconds(300))
            }
            let end = try await FeedUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(
                .init(appID: fixture.store.appID, feedKey: "game-1", event: .end, contentState: try RawJSON(validating: #"{"home":4}"#))
            )
            updates.append(end)
            let endAccepted = Date().timeIntervalSince1970

            let deadline = ContinuousClock.now + .seconds(300)
            while ContinuousClock.now < deadline {
                if try await self.unfinished(fixture, updates.map(\.updateID)).isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            await group.triggerGracefulShutdown()
            try await running.value
            let unfinished = try await self.unfinished(fixture, updates.map(\.updateID))
            #expect(unfinished.isEmpty, "unfinished: \(unfinished)")
            let letters = try await fixture.store.client.query("SELECT count(*)::int FROM dead_letters")
            for try await count in letters.decode(Int.self) { #expect(count == 0) }

            var wrong: [String] = []
            for follower in followers {
                let activity = fixture.shown(follower.deviceID).first
                if activity?.contentState != .object(["home": .int(4)]) || activity?.state != .ended {
                    wrong.append("\(follower.deviceID): \(activity.map { "\($0.contentState) \($0.state)" } ?? "nothing")")
                }
            }
            #expect(wrong.isEmpty, "\(wrong.count) of \(followers.count) devices do not show the final score, ended: \(wrong.prefix(5))")
            let convergence = WireJudge.convergence(
                fixture.emulator.emulator.wireRecords,
                timestamp: end.timestamp,
                since: endAccepted,
                targets: Set(followers.map { "device:\($0.token)" })
            )
            #expect(convergence.missing.isEmpty, "the end never reached \(convergence.missing.count) followers at the wire")
            print(
                "brownout: the end reached \(followers.count) followers within \(convergence.maximum ?? .nan) s (p50 \(convergence.percentile(50) ?? .nan) s)"
            )
        }
    }

    /// The updates not yet finished and the pushes still owed, a line each.
    private func unfinished(_ fixture: DispatchFixture, _ updateIDs: [Int64]) async throws -> [String] {
        let rows = try await fixture.store.client.query(
            """
            SELECT format('update %s %s claimed_by=%s attempts=%s not_before=%s', id, status, claimed_by, attempts, not_before - now())
            FROM updates WHERE id = ANY(\(updateIDs)) AND status IN ('pending', 'dispatching')
            UNION ALL
            SELECT format('owed %s update=%s %s %s claimed_by=%s attempts=%s reason=%s not_before=%s', id, update_id, target_kind,
                          target_id, claimed_by, attempts, last_reason, not_before - now())
            FROM owed_pushes
            """
        )
        return try await rows.decode(String.self).reduce(into: []) { $0.append($1) }
    }
}
