import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Synchronization
import Testing

@testable import LivecastServer

/// A feed that asks for renewal outlives the activity lifetime: each follower's activity is replaced by a
/// push-to-start before its end, the device's app reports the new one, Livecast links the two and sends the next
/// updates to the new one, and ends a token follower's old one only once the new one can be updated. A follower its
/// user dismissed is not renewed, and one whose device has no push-to-start token says so. Judged at the wire, with the
/// emulator's iPhones ending each activity at the same (shortened) lifetime.
@Suite struct RenewalTests {
    private static let app = "/v1/apps/com.example.game"
    /// The activity lifetime of the server and the emulator's iPhones, in seconds: Apple's 8 hours, shortened.
    private static let lifetime = 40

    @Test func followersAreRenewedBeforeTheirLifetimeAndTheOldOnesEndAfter() async throws {
        var configuration = LivecastAPI.Configuration()
        configuration.activityLifetime = .seconds(Self.lifetime)
        var dispatch = Dispatcher.Settings(batchSize: 50, pageSize: 100)
        dispatch.activityLifetime = .seconds(Self.lifetime)
        try await APIFixture.withEmulator(
            "renewal",
            configuration: configuration,
            dispatcherSettings: dispatch,
            emulator: { $0.activityLifetime = Self.lifetime }
        ) { fixture, client, emulator, dispatcher in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let feed = try await client.send(
                .put,
                "\(Self.app)/feeds/game-1",
                key: operatorKey,
                body:
                    #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "noStorage"}, "renewal": {"before": 20, "ifUpdatedWithin": 600}}"#
            )
            #expect(feed.status == .created, "\(feed.text)")
            #expect(feed.json["renewal"]?["before"]?.intValue == 20)
            let tokenDevice = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            let channelDevice = try await fixture.registeredDevice(osVersion: "18.2", emulator: emulator, client: client)
            let dismissingDevice = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            let tokenlessDevice = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            let started = try await client.send(
                .post,
                "\(Self.app)/feeds/game-1/start",
                key: backend,
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(started.status == .accepted, "\(started.text)")
            _ = try await dispatcher.drain()
            let app = AppOnDevices(client: client, key: backend, emulator: emulator)
            let devices = [tokenDevice, channelDevice, dismissingDevice, tokenlessDevice]
            try await app.report(devices)
            let firstActivities = devices.map { emulator.emulator.device(id: $0.id)?.activities.first?.id }
            #expect(firstActivities.allSatisfy { $0 != nil })
            // The user swipes one away; another device's push-to-start token goes (an iOS before 17.2 has none).
            #expect(try await client.send(.post, "\(Self.app)/activities/\(firstActivities[2]!)/dismissed", key: backend).status == .noContent)
            #expect(
                try await client.send(.delete, "\(Self.app)/push-to-start-tokens/\(tokenlessDevice.id)/GameAttributes", key: backend).status
                    == .noContent
            )

            var policy = ReaperPolicy(lifetimeMargin: .seconds(5))
            policy.activityLifetime = .seconds(Self.lifetime)
            let reaper = Reaper(
                database: fixture.client,
                appClients: FixedAppClients.none,
                policy: policy,
                logger: fixture.store.logger
            )
            // The game goes on: an update every second or so, the dispatcher and the reaper at work, and the app
            // reporting what its devices start, until both followers are renewed and their successors registered.
            let score = Score()
            try await eventually(within: .seconds(90), "both followers renewed and their successors registered") {
                let home = score.next()
                let update = try await client.send(
                    .post,
                    "\(Self.app)/feeds/game-1/updates",
                    key: backend,
                    body: #"{"contentState": {"home": \#(home)}}"#
                )
                #expect(update.status == .accepted, "\(update.text)")
                _ = try await reaper.pass()
                _ = try await dispatcher.drain()
                try await app.report([tokenDevice, channelDevice])
                try await Task.sleep(for: .seconds(1))
                return app.registered(on: tokenDevice.id) == 2 && app.registered(on: channelDevice.id) == 2
            }
            // Two more updates after the renewals: they reach the new activities.
            for _ in 0..<2 {
                let home = score.next()
                #expect(
                    try await client.send(.post, "\(Self.app)/feeds/game-1/updates", key: backend, body: #"{"contentState": {"home": \#(home)}}"#)
                        .status == .accepted
                )
                try await Task.sleep(for: .seconds(1.1))
                _ = try await dispatcher.drain()
            }

            for device in [tokenDevice, channelDevice] {
                let shown = try #require(emulator.emulator.device(id: device.id)?.activities)
                #expect(shown.count == 2, "\(device.osVersion): one renewal")
                let renewed = try #require(shown.last)
                #expect(renewed.state == .active)
                #expect(
                    renewed.contentState == .object(["home": .int(score.current)]),
                    "\(device.osVersion): the latest update reached the new activity"
                )
                let record = try await client.send(.get, "\(Self.app)/activities/\(renewed.id)", key: backend)
                #expect(record.json["renewedFrom"]?.stringValue == shown[0].id)
                let old = try await client.send(.get, "\(Self.app)/activities/\(shown[0].id)", key: backend)
                #expect(old.json["renewedTo"]?.stringValue == renewed.id)
                #expect(old.json["state"]?.stringValue == "ended")
                #expect(old.json["renewal"]?["state"]?.stringValue == "sent")
            }
            // The token follower's old activity was ended by push, after its successor's token was registered, with a
            // dismissal date in the past: it left the Lock Screen.
            let oldTokenActivity = try #require(emulator.emulator.device(id: tokenDevice.id)?.activities.first)
            #expect(oldTokenActivity.state == .dismissed)
            let oldToken = try #require(oldTokenActivity.updateToken)
            let endAtTheWire = try #require(emulator.emulator.wireRecords.first { $0.target == "device:\(oldToken)" && $0.event == "end" })
            let successorRegistered = try #require(app.registeredAt[emulator.emulator.device(id: tokenDevice.id)?.activities.last?.id ?? ""])
            #expect(endAtTheWire.arrivedAt >= successorRegistered)

            // No renewal for the dismissed follower, nor for the one without a push-to-start token (its record says so).
            let dismissingToken = dismissingDevice.pushToStartTokens["GameAttributes"]!
            #expect(emulator.emulator.wireRecords.filter { $0.target == "device:\(dismissingToken)" }.count == 1)
            #expect(emulator.emulator.device(id: tokenlessDevice.id)?.activities.count == 1)
            let tokenless = try await client.send(.get, "\(Self.app)/activities/\(firstActivities[3]!)", key: backend)
            #expect(tokenless.json["renewal"]?["state"]?.stringValue == "noPushToStartToken")

            let events = try await client.send(.get, "\(Self.app)/events?types=activity.renewed", key: backend)
            #expect(events.json["events"].items.count == 2, "\(events.text)")
            let verdict = WireJudge.judge(emulator.emulator.wireRecords)
            #expect(verdict.isClean, "at the wire: \(verdict)")
        }
    }
}

/// The app on the emulator's iPhones, as LivecastKit would run it: reports each activity its device shows, with its
/// update token or its channel, as a follower of the feed.
private final class AppOnDevices: @unchecked Sendable {
    let client: any TestClientProtocol
    let key: String
    let emulator: EmulatorFixture
    /// When each reported activity was registered, by ActivityKit id.
    private(set) var registeredAt: [String: Double] = [:]
    private var devices: [String: String] = [:]

    init(client: any TestClientProtocol, key: String, emulator: EmulatorFixture) {
        self.client = client
        self.key = key
        self.emulator = emulator
    }

    /// Reports the devices' activities not reported yet.
    func report(_ devices: [DeviceSnapshot]) async throws {
        for device in devices {
            for activity in self.emulator.emulator.device(id: device.id)?.activities ?? [] where self.registeredAt[activity.id] == nil {
                guard activity.state == .active else { continue }
                let address = activity.channelId.map { #""channelId": "\#($0)""# } ?? #""pushToken": "\#(activity.updateToken ?? "")""#
                let body =
                    #"{"attributesType": "GameAttributes", "feed": "game-1", \#(address), "deviceId": "\#(device.id)", "osVersion": "\#(device.osVersion)"}"#
                let response = try await self.client.send(.put, "/v1/apps/com.example.game/activities/\(activity.id)", key: self.key, body: body)
                #expect(response.status == .created, "\(response.text)")
                self.registeredAt[activity.id] = Date().timeIntervalSince1970
                self.devices[activity.id] = device.id
            }
        }
    }

    /// How many activities of the device were reported.
    func registered(on deviceID: String) -> Int {
        self.devices.values.count { $0 == deviceID }
    }
}

/// The home team's score, counted up by each update the test posts from the condition it waits on.
private final class Score: Sendable {
    private let value = Mutex(0)

    /// The next score.
    func next() -> Int {
        self.value.withLock {
            $0 += 1
            return $0
        }
    }

    /// The last score posted.
    var current: Int { self.value.withLock { $0 } }
}
