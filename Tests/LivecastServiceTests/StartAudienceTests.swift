import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Who a feed's start leaves out: a device that already runs (or has scheduled) an activity of the feed, whose
/// second one would be a duplicate, and a device whose user swiped the feed's activity away, unless the start asks to
/// include such devices.
@Suite struct StartAudienceTests {
    private func start(_ fixture: DispatchFixture, _ devices: [DeviceSnapshot], secondsAgo: Int, includesDismissed: Bool = false) async throws {
        var request = FeedStarts.Request(
            appID: fixture.store.appID,
            feedKey: "game-1",
            audience: .devices(devices.map(\.id)),
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: .init(title: "Kick-off")
        )
        request.timestamp = fixture.now - secondsAgo
        request.includesDismissed = includesDismissed
        _ = try await FeedStarts(client: fixture.store.client, logger: fixture.store.logger).start(request)
        _ = try await fixture.dispatcher().drain()
    }

    /// Registers the activity a device shows as the feed's follower, as its app would.
    private func report(_ fixture: DispatchFixture, _ device: DeviceSnapshot, key: String? = nil, pending: Bool = false) async throws {
        var registration = Activities.Registration(
            appID: fixture.store.appID,
            activityKey: key ?? fixture.shown(device.id).last!.id,
            attributesType: "GameAttributes",
            feedKey: "game-1",
            pushToken: key == nil ? fixture.shown(device.id).last?.updateToken : nil,
            deviceID: device.id
        )
        registration.isPending = pending
        _ = try await Activities(client: fixture.store.client, logger: fixture.store.logger).register(registration)
    }

    @Test func aDeviceWhoseUserDismissedTheFeedIsLeftOutUntilAStartIncludesIt() async throws {
        try await DispatchFixture.with("start_audience_dismissed") { fixture in
            try await fixture.feed("game-1")
            let (swiped, ended) = (try await fixture.registeredDevice(), try await fixture.registeredDevice())
            // Both apps started the feed's activity themselves. One user swipes it away while it runs; the other's
            // app reports it ended, then gone.
            try await self.report(fixture, swiped, key: "swiped")
            try await self.report(fixture, ended, key: "ended")
            let activities = Activities(client: fixture.store.client, logger: fixture.store.logger)
            #expect(try await activities.dismissedByDevice(appID: fixture.store.appID, activityKey: "swiped"))
            #expect(try await activities.endedByDevice(appID: fixture.store.appID, activityKey: "ended"))
            #expect(try await activities.dismissedByDevice(appID: fixture.store.appID, activityKey: "ended"))
            let dismissedBy = try await fixture.store.client.query("SELECT activity_key, dismissed_by FROM activities ORDER BY id")
            var who: [String: String] = [:]
            for try await (key, by) in dismissedBy.decode((String, String).self) { who[key] = by }
            #expect(who == ["swiped": "user", "ended": "device"])

            try await self.start(fixture, [swiped, ended], secondsAgo: 60)
            #expect(fixture.shown(swiped.id).isEmpty, "the user swiped it away: not started")
            #expect(fixture.shown(ended.id).count == 1)

            // The started one is swiped away too; a start that includes such devices starts both again.
            try await self.report(fixture, ended)
            let startedID = fixture.shown(ended.id)[0].id
            #expect(fixture.emulator.emulator.loseActivity(deviceID: ended.id, activityID: startedID))
            #expect(try await activities.dismissedByDevice(appID: fixture.store.appID, activityKey: startedID))
            try await self.start(fixture, [swiped, ended], secondsAgo: 40)
            #expect(fixture.shown(swiped.id).isEmpty && fixture.shown(ended.id).count == 1)
            try await self.start(fixture, [swiped, ended], secondsAgo: 20, includesDismissed: true)
            #expect(fixture.shown(swiped.id).count == 1)
            #expect(fixture.shown(ended.id).count == 2, "started once more, though the feed started it before")
        }
    }

    @Test func aDeviceRunningOrSchedulingAnActivityOfTheFeedIsLeftOut() async throws {
        try await DispatchFixture.with("start_audience_running") { fixture in
            try await fixture.feed("game-1")
            let (running, scheduled, fresh) = (
                try await fixture.registeredDevice(), try await fixture.registeredDevice(), try await fixture.registeredDevice()
            )
            try await self.report(fixture, running, key: "started-by-the-app")
            try await self.report(fixture, scheduled, key: "scheduled-by-the-app", pending: true)
            let state = try await fixture.state(ofActivity: "scheduled-by-the-app")
            #expect(state == "starting")
            try await self.start(fixture, [running, scheduled, fresh], secondsAgo: 30)
            #expect(fixture.shown(running.id).isEmpty)
            #expect(fixture.shown(scheduled.id).isEmpty)
            #expect(fixture.shown(fresh.id).count == 1)
        }
    }
}
