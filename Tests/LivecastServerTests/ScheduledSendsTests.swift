import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Testing

@testable import LivecastServer

/// Scheduled sends through the router: kept until `sendAt`, then checked and sent as if posted then, or refused;
/// cancelled ones never go out. What the emulator's device shows is the test.
@Suite struct ScheduledSendsTests {
    @Test func aScheduledStartGoesOutAtItsTimeAndNotBeforeAndACancelledOneNever() async throws {
        try await APIFixture.withEmulator("scheduled_start") { fixture, client, emulator, dispatcher in
            let scheduler = ScheduledSendsService(intake: fixture.api.updateIntake, logger: fixture.store.logger)
            let app = "/v1/apps/com.example.game"
            let backend = fixture.key(.backend)
            for feed in ["game-1", "game-2"] {
                _ = try await client.send(
                    .put,
                    "\(app)/feeds/\(feed)",
                    key: fixture.key(.operator),
                    body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
                )
            }
            let device = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            // Far enough ahead that the checks before it are done before it, even on a loaded 2-core machine.
            let sendAt = Int(Date().timeIntervalSince1970) + 12
            let start = #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}, "sendAt": \#(sendAt)}"#
            let scheduled = try await client.send(.post, "\(app)/feeds/game-1/start", key: backend, body: start)
            #expect(scheduled.status == .accepted, "\(scheduled.text)")
            #expect(scheduled.json["status"]?.stringValue == "scheduled" && scheduled.json["sendAt"]?.intValue == sendAt)
            let id = try #require(scheduled.json["updateId"]?.intValue)
            let cancelled = try await client.send(.post, "\(app)/feeds/game-2/start", key: backend, body: start)
            let cancelledID = try #require(cancelled.json["updateId"]?.intValue)
            #expect(cancelledID != id)
            let cancel = try await client.send(.delete, "\(app)/updates/\(cancelledID)", key: backend)
            #expect(cancel.status == .ok && cancel.json["status"]?.stringValue == "cancelled", "\(cancel.text)")

            // Before its time: nothing is due, nothing in the outbox, nothing on the device.
            #expect(try await scheduler.sendDue() == 0)
            #expect(try await dispatcher.drain() == 0)
            #expect(try await fixture.count("updates") == 0)
            let waiting = try await client.send(.get, "\(app)/updates/\(id)", key: backend)
            #expect(waiting.json["status"]?.stringValue == "scheduled", "\(waiting.text)")
            #expect(emulator.emulator.device(id: device.id)?.activities.isEmpty == true)

            while Int(Date().timeIntervalSince1970) < sendAt { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try await scheduler.sendDue() == 1, "exactly the scheduled start is due; the cancelled one is not")
            #expect(try await dispatcher.drain() == 1)
            let activities = emulator.emulator.device(id: device.id)?.activities ?? []
            #expect(activities.count == 1 && activities.first?.contentState == .object(["home": .int(0)]))
            #expect((activities.first?.startedAt ?? 0) >= sendAt - 1)
            let sent = try await client.send(.get, "\(app)/updates/\(id)", key: backend)
            #expect(sent.json["status"]?.stringValue == "sent" && sent.json["event"]?.stringValue == "start", "\(sent.text)")
            let late = try await client.send(.delete, "\(app)/updates/\(id)", key: backend)
            #expect(late.status == .conflict, "\(late.text)")
            let stillCancelled = try await client.send(.get, "\(app)/updates/\(cancelledID)", key: backend)
            #expect(stillCancelled.json["status"]?.stringValue == "cancelled")
        }
    }

    @Test func aScheduledUpdateMeetsTheOrderingRulesWhenItIsSent() async throws {
        try await APIFixture.with("scheduled_order") { fixture, client in
            let scheduler = ScheduledSendsService(intake: fixture.api.updateIntake, logger: fixture.store.logger)
            let app = "/v1/apps/com.example.game"
            let backend = fixture.key(.backend)
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            let now = Int(Date().timeIntervalSince1970)
            let sendAt = now + 8  // still ahead after both posts, even on a loaded machine
            let scheduled = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: backend,
                body: #"{"contentState": {"home": 1}, "timestamp": \#(sendAt), "sendAt": \#(sendAt)}"#
            )
            let id = try #require(scheduled.json["updateId"]?.intValue)
            // Meanwhile a newer timestamp is accepted: when the scheduled update's time comes, it would go backwards.
            let newer = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: backend,
                body: #"{"contentState": {"home": 2}, "timestamp": \#(now + 30)}"#
            )
            #expect(newer.status == .accepted, "\(newer.text)")
            while Int(Date().timeIntervalSince1970) < sendAt { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try await scheduler.sendDue() == 1)
            let refused = try await client.send(.get, "\(app)/updates/\(id)", key: backend)
            #expect(refused.json["status"]?.stringValue == "refused", "\(refused.text)")
            #expect(refused.json["reason"]?.stringValue?.hasPrefix("409 stale_timestamp") == true, "\(refused.text)")
            #expect(try await fixture.count("updates") == 1)
        }
    }

    @Test func aScheduleIsCheckedWhenPostedAndReplayedByItsIdempotencyKey() async throws {
        try await APIFixture.with("scheduled_checks") { fixture, client in
            let app = "/v1/apps/com.example.game"
            let backend = fixture.key(.backend)
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            let now = Int(Date().timeIntervalSince1970)
            let cases: [(String, String, Int, String?)] = [
                ("feeds/game-1/updates", #"{"contentState": {}, "sendAt": \#(now + 8 * 86400)}"#, 422, "sendAt"),
                ("feeds/game-1/updates", #"{"contentState": {}, "sendAt": "soon"}"#, 400, "sendAt"),
                ("feeds/none/updates", #"{"contentState": {}, "sendAt": \#(now + 60)}"#, 404, "feedKey"),
                ("activities/none/end", #"{"sendAt": \#(now + 60)}"#, 404, "activityId"),
                // Checked as of its sendAt: a stale date before then is already past.
                ("feeds/game-1/updates", #"{"contentState": {}, "sendAt": \#(now + 3600), "staleDate": \#(now + 60)}"#, 422, "staleDate"),
            ]
            for (path, body, status, field) in cases {
                let response = try await client.send(.post, "\(app)/\(path)", key: backend, body: body)
                #expect(response.status.code == status && response.errorField == field, "\(path) \(body): \(response.text)")
            }
            let body = #"{"contentState": {"home": 1}, "sendAt": \#(now + 600)}"#
            let first = try await client.send(.post, "\(app)/feeds/game-1/updates", key: backend, body: body, headers: [.idempotencyKey: "kick-off"])
            let again = try await client.send(.post, "\(app)/feeds/game-1/updates", key: backend, body: body, headers: [.idempotencyKey: "kick-off"])
            #expect(first.status == .accepted && again.text == first.text && again.headers[.idempotentReplayed] == "true", "\(again.text)")
            // The insert that kept the request kept its answer too, numbered with the id it drew.
            let kept = try await fixture.client.query("SELECT response FROM scheduled_updates")
            #expect(try await kept.decode(String?.self).reduce(nil) { $1 } == first.text)
            let other = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: backend,
                body: #"{"contentState": {"home": 9}, "sendAt": \#(now + 600)}"#,
                headers: [.idempotencyKey: "kick-off"]
            )
            #expect(other.status.code == 422 && other.errorCode == "idempotency_key_reused", "\(other.text)")
            #expect(try await fixture.count("scheduled_updates") == 1)
            // The same request twice at once: whichever is second is replayed, or told the first is in progress
            // when both missed the other's answer (the unique key refuses the second row), never a 500.
            for round in 0..<10 {
                let headers: HTTPFields = [.idempotencyKey: "twice-\(round)"]
                async let one = client.send(.post, "\(app)/feeds/game-1/updates", key: backend, body: body, headers: headers)
                async let two = client.send(.post, "\(app)/feeds/game-1/updates", key: backend, body: body, headers: headers)
                let statuses = try await [one.status, two.status]
                #expect(statuses.contains(.accepted) && statuses.allSatisfy { $0 == .accepted || $0 == .conflict }, "\(statuses)")
            }
            #expect(try await fixture.count("scheduled_updates") == 11)
            let unknown = try await client.send(.delete, "\(app)/updates/999999", key: backend)
            #expect(unknown.status == .notFound)
        }
    }
}
