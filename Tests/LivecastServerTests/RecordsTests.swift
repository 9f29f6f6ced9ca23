import APNs
import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// An activity's record and the delivery log, through the router, after a game sent by the dispatcher to the
/// emulator's devices: the `apns-id` a device saw finds its push, successes included.
@Suite struct RecordsTests {
    @Test func aPushIsFoundByTheAPNsIDTheDeviceSawAndAnActivityTellsItsStory() async throws {
        try await APIFixture.withEmulator("records_game") { fixture, client, emulator, dispatcher in
            let backend = fixture.key(.backend)
            let app = "/v1/apps/com.example.game"
            let created = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "noStorage"}}"#
            )
            #expect(created.status == .created, "\(created.text)")
            var devices: [DeviceSnapshot] = []
            for osVersion in ["18.2", "17.5"] {
                devices.append(try await fixture.registeredDevice(osVersion: osVersion, emulator: emulator, client: client))
            }
            let start = try await client.send(
                .post,
                "\(app)/feeds/game-1/start",
                key: backend,
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(start.status == .accepted, "\(start.text)")
            #expect(try await dispatcher.drain() == 1)
            var activities: [ActivitySnapshot] = []
            for device in devices {
                let activity = try #require(emulator.emulator.device(id: device.id)?.activities.first)
                let body =
                    activity.updateToken.map { #""pushToken": "\#($0)""# } ?? #""channelId": "\#(activity.channelId ?? "")""#
                let registered = try await client.send(
                    .put,
                    "\(app)/activities/\(activity.id)",
                    key: backend,
                    body: #"{"attributesType": "GameAttributes", "feed": "game-1", "deviceId": "\#(device.id)", \#(body)}"#
                )
                #expect(registered.status == .created, "\(registered.text)")
                activities.append(activity)
            }
            let timestamp = Int(Date().timeIntervalSince1970) + 5
            let update = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: backend,
                body: #"{"contentState": {"home": 1}, "timestamp": \#(timestamp)}"#
            )
            #expect(update.status == .accepted, "\(update.text)")
            let updateID = try #require(update.json["updateId"]?.intValue)
            #expect(try await dispatcher.drain() == 1)

            // The token follower (iOS 17.5): its record, and its last push found by the id its device saw.
            let tokenActivity = try #require(emulator.emulator.device(id: devices[1].id)?.activities.first)
            let tokenAPNsID = try #require(tokenActivity.lastApnsId)
            let record = try await client.send(.get, "\(app)/activities/\(tokenActivity.id)", key: backend)
            #expect(record.status == .ok, "\(record.text)")
            #expect(record.json["kind"]?.stringValue == "token")
            #expect(record.json["state"]?.stringValue == "active")
            #expect(record.json["feed"]?.stringValue == "game-1")
            #expect(record.json["token"]?.stringValue == tokenActivity.updateToken)
            let timeline = record.json["timeline"].items
            #expect(
                timeline.map { $0["type"]?.stringValue ?? "" }.sorted() == ["push", "push", "registered", "tokenRegistered"],
                "\(record.text)"
            )
            #expect(timeline.map { $0["at"]?.intValue ?? 0 } == timeline.map { $0["at"]?.intValue ?? 0 }.sorted(), "oldest first")
            let pushes = timeline.compactMap { $0["push"] }
            #expect(pushes.count == 2, "\(record.text)")
            let startPush = try #require(pushes.first { $0["event"]?.stringValue == "start" })
            #expect(startPush["targetKind"]?.stringValue == "pushToStart")
            #expect(startPush["deviceId"]?.stringValue == devices[1].id)
            #expect(startPush["outcome"]?.stringValue == "delivered")
            let updatePush = try #require(pushes.first { $0["event"]?.stringValue == "update" })
            #expect(updatePush["apnsId"]?.stringValue == tokenAPNsID)
            #expect(updatePush["updateId"]?.intValue == updateID)
            #expect(updatePush["outcome"]?.stringValue == "delivered" && updatePush["status"]?.intValue == 200)
            #expect(updatePush["target"]?.stringValue == tokenActivity.updateToken)

            let found = try await client.send(.get, "\(app)/deliveries?apnsId=\(tokenAPNsID)", key: backend)
            #expect(found.status == .ok, "\(found.text)")
            let foundPush = try #require(found.json["deliveries"].items.first)
            #expect(found.json["deliveries"].items.count == 1)
            #expect(foundPush["activityId"]?.stringValue == tokenActivity.id)
            #expect(foundPush["outcome"]?.stringValue == "delivered")
            #expect(foundPush["timestamp"]?.intValue == timestamp)
            // The same id in upper case is the same push; the start's id finds the start.
            let upper = try await client.send(.get, "\(app)/deliveries?apnsId=\(tokenAPNsID.uppercased())", key: backend)
            #expect(upper.json["deliveries"].items.first?["updateId"]?.intValue == updateID)
            let startID = try #require(startPush["apnsId"]?.stringValue)
            let foundStart = try await client.send(.get, "\(app)/deliveries?apnsId=\(startID)", key: backend)
            #expect(foundStart.json["deliveries"].items.first?["event"]?.stringValue == "start")

            // The channel follower (iOS 18.2): the broadcast it saw.
            let channelActivity = try #require(emulator.emulator.device(id: devices[0].id)?.activities.first)
            let broadcastID = try #require(channelActivity.lastApnsId)
            let channelRecord = try await client.send(.get, "\(app)/activities/\(channelActivity.id)", key: backend)
            #expect(channelRecord.json["kind"]?.stringValue == "channel")
            let broadcast = try #require(channelRecord.json["timeline"].items.compactMap { $0["push"] }.last)
            #expect(broadcast["apnsId"]?.stringValue == broadcastID)
            #expect(broadcast["targetKind"]?.stringValue == "channel" && broadcast["outcome"]?.stringValue == "delivered")
            let foundBroadcast = try await client.send(.get, "\(app)/deliveries?apnsId=\(broadcastID)", key: backend)
            #expect(foundBroadcast.json["deliveries"].items.first?["target"]?.stringValue == channelActivity.channelId)

            // The update's pushes: the broadcast and the token follower.
            let ofUpdate = try await client.send(.get, "\(app)/deliveries?updateId=\(updateID)", key: backend)
            let ids = Set(ofUpdate.json["deliveries"].items.compactMap { $0["apnsId"]?.stringValue })
            #expect(ids == [tokenAPNsID, broadcastID], "\(ofUpdate.text)")

            // Another app's key finds nothing of this app's.
            let otherApp = try await client.send(.get, "/v1/apps/com.example.other/deliveries?apnsId=\(tokenAPNsID)", key: fixture.otherKey)
            #expect(otherApp.status == .ok && otherApp.json["deliveries"].items.isEmpty, "\(otherApp.text)")
            let otherRecord = try await client.send(.get, "/v1/apps/com.example.other/activities/\(tokenActivity.id)", key: fixture.otherKey)
            #expect(otherRecord.status == .notFound)
        }
    }

    @Test func aRefusedPushIsRecordedWithAPNsReasonAndFoundByTokenAndReason() async throws {
        try await EmulatorFixture.with { emulator in
            let apns = try emulator.makeClient()
            defer { Task { await apns.shutdown() } }
            try await APIFixture.with("records_refused", emulator: emulator) { fixture, client in
                let dispatcher = Dispatcher(
                    database: fixture.client,
                    appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
                    logger: fixture.store.logger
                )
                let backend = fixture.key(.backend)
                let app = "/v1/apps/com.example.game"
                // A token the emulator's devices do not hold: APNs answers 400 BadDeviceToken.
                let token = String(repeating: "ab", count: 32)
                let registered = try await client.send(
                    .put,
                    "\(app)/activities/order-7",
                    key: backend,
                    body: #"{"attributesType": "DeliveryAttributes", "pushToken": "\#(token)"}"#
                )
                #expect(registered.status == .created, "\(registered.text)")
                let update = try await client.send(.post, "\(app)/activities/order-7/updates", key: backend, body: #"{"contentState": {"eta": 5}}"#)
                #expect(update.status == .accepted, "\(update.text)")
                let updateID = try #require(update.json["updateId"]?.intValue)
                #expect(try await dispatcher.drain() == 1)

                let record = try await client.send(.get, "\(app)/activities/order-7", key: backend)
                #expect(record.status == .ok, "\(record.text)")
                #expect(record.json["token"] == nil, "the refused token is no longer live: \(record.text)")
                let timeline = record.json["timeline"].items
                let push = try #require(timeline.compactMap { $0["push"] }.first)
                #expect(push["outcome"]?.stringValue == "failed")
                #expect(push["status"]?.intValue == 400 && push["reason"]?.stringValue == "BadDeviceToken")
                #expect(push["target"]?.stringValue == token)
                let invalidated = try #require(timeline.first { $0["type"]?.stringValue == "tokenInvalidated" })
                #expect(invalidated["reason"]?.stringValue == "BadDeviceToken" && invalidated["token"]?.stringValue == token)
                let apnsID = try #require(push["apnsId"]?.stringValue)
                #expect(PushID(apnsID)?.updateID == Int64(updateID))

                for query in ["apnsId=\(apnsID)", "token=\(token)", "reason=BadDeviceToken", "updateId=\(updateID)&status=400"] {
                    let found = try await client.send(.get, "\(app)/deliveries?\(query)", key: backend)
                    let records = found.json["deliveries"].items
                    #expect(records.count == 1, "\(query): \(found.text)")
                    #expect(records.first?["apnsId"]?.stringValue == apnsID, "\(query): \(found.text)")
                    #expect(records.first?["outcome"]?.stringValue == "failed", "\(query): \(found.text)")
                }
                let delivered = try await client.send(.get, "\(app)/deliveries?updateId=\(updateID)&status=200", key: backend)
                #expect(delivered.json["deliveries"].items.isEmpty, "\(delivered.text)")
            }
        }
    }

    @Test func aFeedCountsTheStartsWhoseActivityWasNeverRegistered() async throws {
        try await APIFixture.withEmulator("records_unregistered_starts", configuration: .init(startRegistrationTimeout: .seconds(1))) {
            fixture,
            client,
            emulator,
            dispatcher in
            let app = "/v1/apps/com.example.game"
            let backend = fixture.key(.backend)
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            var devices: [DeviceSnapshot] = []
            for _ in 0..<3 {
                devices.append(try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client))
            }
            let start = try await client.send(
                .post,
                "\(app)/feeds/game-1/start",
                key: backend,
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(start.status == .accepted, "\(start.text)")
            #expect(try await dispatcher.drain() == 1)
            // Only the first device's app reports its activity.
            let activity = try #require(emulator.emulator.device(id: devices[0].id)?.activities.first)
            let registered = try await client.send(
                .put,
                "\(app)/activities/\(activity.id)",
                key: backend,
                body:
                    #"{"attributesType": "GameAttributes", "feed": "game-1", "deviceId": "\#(devices[0].id)", "pushToken": "\#(activity.updateToken ?? "")"}"#
            )
            #expect(registered.status == .created, "\(registered.text)")
            let early = try await client.send(.get, "\(app)/feeds/game-1", key: fixture.key(.operator))
            #expect(early.json["starts"]?["sent"]?.intValue == 3)
            // The registration timeout (1 s) passes: the starts moved back, not waited for.
            try await fixture.client.query("UPDATE feed_starts SET started_at = started_at - interval '1.5 seconds'")
            let late = try await client.send(.get, "\(app)/feeds/game-1", key: fixture.key(.operator))
            #expect(late.json["starts"]?["sent"]?.intValue == 3)
            #expect(late.json["starts"]?["unregistered"]?.intValue == 2, "\(late.text)")
            let listed = try await client.send(.get, "\(app)/feeds", key: fixture.key(.operator))
            #expect(listed.json["feeds"].items.first?["starts"]?["unregistered"]?.intValue == 2)
        }
    }

    @Test func badQueriesAreRefusedAndForeignIDsFindNothing() async throws {
        try await APIFixture.with("records_queries") { fixture, client in
            let backend = fixture.key(.backend)
            let app = "/v1/apps/com.example.game"
            let refused: [(String, String)] = [
                ("apnsId=not-a-uuid", "apnsId"),
                ("apnsId=------------------------------------", "apnsId"),
                ("limit=0", "limit"),
                ("limit=1001", "limit"),
                ("updateId=-3", "updateId"),
                ("status=abc", "status"),
                ("token=", "token"),
                ("reason=%01", "reason"),
            ]
            for (query, field) in refused {
                let response = try await client.send(.get, "\(app)/deliveries?\(query)", key: backend)
                #expect(response.status.code == 422, "\(query): \(response.text)")
                #expect(response.errorField == field, "\(query): \(response.text)")
            }
            // APNs' own ids (version 4) and ids of pushes that do not exist find nothing.
            for id in [UUID().uuidString.lowercased(), PushID(updateID: 99, targetKind: .activity, targetID: 5)!.uuidString] {
                let response = try await client.send(.get, "\(app)/deliveries?apnsId=\(id)", key: backend)
                #expect(response.status == .ok && response.json["deliveries"].items.isEmpty, "\(response.text)")
            }
            // A foreign id does not spare the other parameters their checks.
            let foreign = UUID().uuidString.lowercased()
            let badAfter = try await client.send(.get, "\(app)/deliveries?apnsId=\(foreign)&after=soon", key: backend)
            #expect(badAfter.status.code == 422 && badAfter.errorField == "after", "\(badAfter.text)")
            let unknown = try await client.send(.get, "\(app)/activities/nothing", key: backend)
            #expect(unknown.status == .notFound && unknown.errorField == "activityId")
            let unauthenticated = try await client.send(.get, "\(app)/deliveries", key: nil)
            #expect(unauthenticated.status == .unauthorized)
        }
    }
}
