import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

/// An activity that a start (or a renewal) sent before its feed ended began on the device, but its app reported it
/// only after the end: the feed's end never reached it. Livecast takes it in and ends it at once, with the feed's
/// last content state on its own token, so the device shows the end like every other follower. An activity the feed
/// never sent is still refused, and a client key still learns nothing of the feed. Judged at the wire.
@Suite struct LateReportTests {
    private static let app = "/v1/apps/com.example.game"

    @Test func aStartReportedAfterTheFeedEndedIsEndedWithTheFeedsLastState() async throws {
        try await APIFixture.withEmulator("late_report") { fixture, client, emulator, dispatcher in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let feed = try await client.send(
                .put,
                "\(Self.app)/feeds/final",
                key: operatorKey,
                body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}}"#
            )
            #expect(feed.status == .created, "\(feed.text)")
            let started = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            let start = try await client.send(
                .post,
                "\(Self.app)/feeds/final/start",
                key: backend,
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(start.status == .accepted, "\(start.text)")
            _ = try await dispatcher.drain()
            let activity = try #require(emulator.emulator.device(id: started.id)?.activities.first)
            let updateToken = try #require(activity.updateToken)

            // The feed ends before the app reports the activity its start began.
            let dismissalDate = Int(Date().timeIntervalSince1970) + 600
            let end = try await client.send(
                .post,
                "\(Self.app)/feeds/final/end",
                key: backend,
                body: #"{"contentState": {"home": 3}, "dismissalDate": \#(dismissalDate)}"#
            )
            #expect(end.status == .accepted, "\(end.text)")
            let endID = try #require(end.json["updateId"]?.intValue)
            try await eventually("the feed's end sent") {
                _ = try await dispatcher.drain()
                return try await client.send(.get, "\(Self.app)/updates/\(endID)", key: backend).json["status"]?.stringValue == "sent"
            }
            #expect(emulator.emulator.device(id: started.id)?.activities.first?.state == .active, "the end did not reach it")

            let report =
                #"{"attributesType": "GameAttributes", "feed": "final", "pushToken": "\#(updateToken)", "deviceId": "\#(started.id)", "osVersion": "17.5"}"#
            let late = try await client.send(.put, "\(Self.app)/activities/\(activity.id)", key: backend, body: report)
            #expect(late.status == .created, "\(late.text)")
            try await eventually("the late activity's end sent") {
                _ = try await dispatcher.drain()
                return emulator.emulator.device(id: started.id)?.activities.first?.state != .active
            }
            let shown = try #require(emulator.emulator.device(id: started.id)?.activities.first)
            #expect(shown.state == .ended)
            #expect(shown.contentState == .object(["home": .int(3)]), "it shows the feed's last state")
            #expect(shown.dismissalDate == dismissalDate, "until the feed's end leaves the Lock Screen")
            let ends = emulator.emulator.wireRecords.filter { $0.target == "device:\(updateToken)" }
            #expect(ends.map(\.event) == ["end"], "one push on its token: the end")
            let record = try await client.send(.get, "\(Self.app)/activities/\(activity.id)", key: backend)
            #expect(record.json["state"]?.stringValue == "ended", "\(record.text)")
            let again = try await client.send(.put, "\(Self.app)/activities/\(activity.id)", key: backend, body: report)
            #expect(again.status == .conflict, "\(again.text)")

            // An activity the feed never started is refused, as before; a client key hears only that it cannot follow.
            let stranger = #"{"attributesType": "GameAttributes", "feed": "final", "pushToken": "ab12", "deviceId": "phone-9"}"#
            let refused = try await client.send(.put, "\(Self.app)/activities/made-up", key: backend, body: stranger)
            #expect(refused.status == .conflict, "\(refused.text)")
            #expect(refused.json["error"]?["message"]?.stringValue == "the feed has ended")
            let hidden = try await client.send(
                .put,
                "\(Self.app)/activities/made-up",
                key: fixture.key(.client),
                body: stranger,
                headers: [ClientKeys.deviceHeader: "phone-9"]
            )
            #expect(hidden.status == .notFound, "\(hidden.text)")
            let verdict = WireJudge.judge(emulator.emulator.wireRecords)
            #expect(verdict.isClean, "at the wire: \(verdict)")
        }
    }
}
