import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// The dispatcher as a service: woken by the outbox's NOTIFY, and stopping cleanly on graceful shutdown.
@Suite struct DispatcherServiceTests {
    @Test func anAcceptedUpdateWakesTheServiceAtOnce() async throws {
        try await DispatchFixture.with("service_notify") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let service = try await Self.whileServicePollingOnceAMinuteWaits(fixture) {
                let update = try await fixture.update(feed: "game-1", home: 7, timestamp: fixture.now)
                try await Self.until(update.updateID, is: "sent", fixture)
                #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(7)]))
            }
            #expect(!service.isRunning)
        }
    }

    /// An update coalesced into the next second is held until then; its notification says when, and a worker is
    /// woken at that moment, not at its next poll.
    @Test func anUpdateHeldForTheNextSecondIsSentWhenItIsDue() async throws {
        try await DispatchFixture.with("service_held") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            try await Self.whileServicePollingOnceAMinuteWaits(fixture) {
                let timestamp = fixture.now + 5
                let first = try await fixture.update(feed: "game-1", home: 1, timestamp: timestamp)
                try await Self.until(first.updateID, is: "sent", fixture)
                // The same timestamp again: it goes out at `timestamp + 1`, held until that second begins.
                let held = try await fixture.update(feed: "game-1", home: 2, timestamp: timestamp)
                if Date().timeIntervalSince1970 < Double(timestamp + 1) {  // unless a starved machine took that long
                    #expect(try await fixture.status(held.updateID) == "pending", "sent before it was due")
                }
                try await Self.until(held.updateID, is: "sent", fixture)
                #expect(Date().timeIntervalSince1970 >= Double(timestamp + 1), "sent before it was due")
                #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(2)]))
            }
        }
    }

    /// While updates keep coming, a quick round that found work is followed by the next no sooner than the spacing
    /// after it began.
    @Test func quickRoundsStartTheSpacingApartWhileWorkKeepsComing() async throws {
        try await DispatchFixture.with("service_spacing") { fixture in
            for key in ["a1", "a2"] { _ = try await fixture.startedActivity(key: key) }
            let spacing = 3.0
            try await Self.whileServicePollingOnceAMinuteWaits(fixture, quickRoundSpacing: .seconds(spacing)) {
                let first = try await fixture.update(activity: "a1", home: 1)
                try await Self.until(first.updateID, is: "sent", fixture)
                // Due at once, and the lane is woken: only the spacing holds it back.
                let second = try await fixture.update(activity: "a2", home: 1)
                try await Self.until(second.updateID, is: "sent", fixture)
                // The first round began after the first update was accepted (woken by its NOTIFY), and the second
                // claim set `not_before` to its own time plus the lease. Both times are PostgreSQL's; the margin is for
                // its wall clock against the service's monotonic one.
                let secondClaim = try await Self.leaseEnd(second.updateID, fixture) - DispatchFixture.settings.lease.inSeconds
                let firstAccepted = try await Self.acceptedAt(first.updateID, fixture)
                #expect(secondClaim - firstAccepted >= spacing - 0.1, "the next round began before the spacing had passed")
            }
        }
    }

    /// A round that found nothing holds nothing back: with a spacing of a minute, an update that comes after the
    /// workers' first, empty rounds goes at once.
    @Test func aQuickRoundThatFoundNothingHoldsNothingBack() async throws {
        try await DispatchFixture.with("service_spacing_idle") { fixture in
            _ = try await fixture.startedActivity(key: "a1")
            try await Self.whileServicePollingOnceAMinuteWaits(fixture, quickRoundSpacing: .seconds(60)) {
                try await Self.until(try await fixture.update(activity: "a1", home: 1).updateID, is: "sent", fixture)
            }
        }
    }

    /// When the lease of an update's last claim ends, in UNIX seconds (PostgreSQL's clock).
    private static func leaseEnd(_ updateID: Int64, _ fixture: DispatchFixture) async throws -> Double {
        try await Self.epoch(of: "not_before", updateID, fixture)
    }

    /// When an update was accepted, in UNIX seconds (PostgreSQL's clock).
    private static func acceptedAt(_ updateID: Int64, _ fixture: DispatchFixture) async throws -> Double {
        try await Self.epoch(of: "created_at", updateID, fixture)
    }

    private static func epoch(of column: String, _ updateID: Int64, _ fixture: DispatchFixture) async throws -> Double {
        let rows = try await fixture.store.client.query(
            "SELECT extract(epoch FROM \(unescaped: column))::float8 FROM updates WHERE id = \(updateID)"
        )
        for try await seconds in rows.decode(Double.self) { return seconds }
        return .nan
    }

    /// Runs `body` while a dispatcher service of two workers waits for work, polling once a minute: within a test's
    /// few seconds only a wake-up (a `NOTIFY`, or a held update's due time) can deliver. Then stops it gracefully.
    /// - Returns: The stopped service.
    @discardableResult
    private static func whileServicePollingOnceAMinuteWaits(
        _ fixture: DispatchFixture,
        quickRoundSpacing: Duration = .milliseconds(10),
        _ body: () async throws -> Void
    ) async throws -> DispatcherService {
        let service = DispatcherService(
            dispatcher: fixture.dispatcher(),
            database: fixture.store.client,
            workers: 2,
            pollInterval: .seconds(60),
            quickRoundSpacing: quickRoundSpacing,
            logger: fixture.store.logger
        )
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
        let running = Task { try await group.run() }
        // Until both workers have looked once and wait: a worker still in its first round (on a loaded machine)
        // would take the body's updates unannounced.
        let deadline = ContinuousClock.now + .seconds(60)
        while service.waitingWorkers < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try #require(service.waitingWorkers == 2, "the workers never waited for work")
        try await body()
        await group.triggerGracefulShutdown()
        try await running.value
        return service
    }

    /// Waits until an update has `status`, at most 20 s.
    private static func until(_ updateID: Int64, is status: String, _ fixture: DispatchFixture) async throws {
        try await eventually(within: .seconds(20), every: .milliseconds(50), "update \(updateID) \(status)") {
            try await fixture.status(updateID) == status
        }
    }

    /// A graceful shutdown in the middle of a fan-out: the page in flight is finished and checkpointed, the update
    /// goes back to the outbox unclaimed, and the next dispatcher goes on from there. No follower gets it twice.
    @Test(.timeLimit(.minutes(5))) func aGracefulShutdownStopsAFanOutAtItsCheckpoint() async throws {
        try await DispatchFixture.with("service_graceful_fanout") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(2000, feed: "game-1")
            let settings = Dispatcher.Settings(pageSize: 50)
            let service = DispatcherService(
                dispatcher: fixture.dispatcher(settings),
                database: fixture.store.client,
                workers: 1,
                logger: fixture.store.logger
            )
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
            let running = Task { try await group.run() }
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let deadline = ContinuousClock.now + .seconds(120)
            while try await fixture.cursor(update.updateID) == 0, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            await group.triggerGracefulShutdown()
            try await running.value

            let stoppedAt = try await fixture.cursor(update.updateID)
            #expect(try await fixture.status(update.updateID) == "pending", "back in the outbox")
            let claimedBy = try await fixture.store.client.query("SELECT claimed_by FROM updates WHERE id = \(update.updateID)")
            for try await holder in claimedBy.decode(String?.self) { #expect(holder == nil, "still claimed") }
            let sentBeforeStop = try await fixture.counts(update.updateID).sent
            #expect(sentBeforeStop > 0 && sentBeforeStop < followers.count, "stopped in the middle: \(sentBeforeStop) sent, cursor \(stoppedAt)")
            #expect(sentBeforeStop % settings.pageSize == 0, "stopped at a page's end")

            _ = try await fixture.dispatcher(settings).drain()
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (followers.count, 0))
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(1)]))
                #expect(activity.ignoredPushes.isEmpty, "a follower got the update twice")
            }
        }
    }
}
