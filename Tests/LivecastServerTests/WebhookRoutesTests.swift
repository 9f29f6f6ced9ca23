import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import NIOCore
import PostgresNIO
import Testing

@testable import LivecastServer

/// The webhook endpoint routes through the router: creation with its secret shown once and stored sealed, reads
/// without it, changes that decide which events become deliveries, rotation, removal, the URL's and the events'
/// checks, and the failed deliveries' list and replay.
@Suite struct WebhookRoutesTests {
    static let app = "/v1/apps/com.example.game"

    @Test func anEndpointIsCreatedWithItsSecretShownOnceAndStoredSealed() async throws {
        let masterKey = MasterKey.random()
        try await APIFixture.with("webhook_create", settings: { $0.masterKey = masterKey }) { fixture, client in
            let created = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.operator),
                body: #"{"url": "https://hooks.example.com/livecast", "events": ["activity.ended", "sending.held"]}"#
            )
            #expect(created.status == .created, "\(created.text)")
            let secret = try #require(created.json["secret"]?.stringValue)
            #expect(secret.hasPrefix("whsec_") && secret.count > 40)
            let id = try #require(created.json["id"]?.stringValue)
            #expect(created.json["url"]?.stringValue == "https://hooks.example.com/livecast")
            #expect(created.json["events"].items.compactMap(\.stringValue) == ["activity.ended", "sending.held"])
            #expect(created.json["enabled"] == .bool(true))
            #expect(created.json["delivery"]?["pending"]?.intValue == 0 && created.json["delivery"]?["failed"]?.intValue == 0)

            let sealed = try await fixture.sealedSecrets(id)
            #expect(sealed.current != Data(secret.utf8) && !String(decoding: sealed.current, as: UTF8.self).contains(secret))
            #expect(try WebhookSecret.open(sealed.current, for: try #require(UUID(uuidString: id)), with: masterKey).text == secret)
            #expect(sealed.previous == nil)

            let listed = try await client.send(.get, "\(Self.app)/webhooks", key: fixture.key(.operator))
            #expect(listed.status == .ok, "\(listed.text)")
            #expect(listed.json["webhooks"].items.count == 1 && listed.json["webhooks"].items.first?["id"]?.stringValue == id)
            let fetched = try await client.send(.get, "\(Self.app)/webhooks/\(id)", key: fixture.key(.operator))
            #expect(fetched.status == .ok && fetched.json["id"]?.stringValue == id, "\(fetched.text)")
            for answer in [listed, fetched] {
                #expect(answer.json["secret"] == nil && answer.json["webhooks"].items.allSatisfy { $0["secret"] == nil })
                #expect(!answer.text.contains(secret))
            }

            let all = try await client.send(.post, "\(Self.app)/webhooks", key: fixture.key(.operator), body: #"{"url": "https://b.example.com/"}"#)
            #expect(all.status == .created && all.json["events"].items.isEmpty, "\(all.text)")

            let byBackend = try await client.send(.get, "\(Self.app)/webhooks", key: fixture.key(.backend))
            #expect(byBackend.status == .forbidden && byBackend.errorCode == "forbidden")
            let createdByBackend = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.backend),
                body: #"{"url": "https://c.example.com/"}"#
            )
            #expect(createdByBackend.status == .forbidden)
            let otherApp = try await client.send(.get, "/v1/apps/com.example.other/webhooks/\(id)", key: fixture.otherKey)
            #expect(otherApp.status == .notFound && otherApp.errorField == "webhookId")
        }
    }

    @Test func aDisabledEndpointAndOneThatWantsOtherTypesGetNoDelivery() async throws {
        try await APIFixture.with("webhook_deliveries_made", settings: { $0.masterKey = .random() }) { fixture, client in
            let everything = try await fixture.createWebhook(client, #"{"url": "https://all.example.com/"}"#)
            let endsOnly = try await fixture.createWebhook(client, #"{"url": "https://ends.example.com/", "events": ["activity.ended"]}"#)

            let disabled = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(everything)",
                key: fixture.key(.operator),
                body: #"{"enabled": false}"#
            )
            #expect(disabled.status == .ok && disabled.json["enabled"] == .bool(false), "\(disabled.text)")
            try await fixture.holdSending(true)
            #expect(try await fixture.deliveries(everything) == 0, "disabled")
            #expect(try await fixture.deliveries(endsOnly) == 0, "sending.held is not wanted")

            let enabled = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(everything)",
                key: fixture.key(.operator),
                body: #"{"enabled": true}"#
            )
            #expect(enabled.status == .ok && enabled.json["enabled"] == .bool(true), "\(enabled.text)")
            try await fixture.holdSending(false)
            #expect(try await fixture.deliveries(everything) == 1, "sending.resumed")
            #expect(try await fixture.deliveries(endsOnly) == 0)
            let shown = try await client.send(.get, "\(Self.app)/webhooks/\(everything)", key: fixture.key(.operator))
            #expect(shown.json["delivery"]?["pending"]?.intValue == 1, "\(shown.text)")
            #expect(shown.json["delivery"]?["oldestPendingAt"]?.stringValue != nil)
            #expect((shown.json["delivery"]?["oldestPendingAgeSeconds"]?.intValue ?? -1) >= 0)

            // Wanting sending.held now, the narrow one gets the next hold.
            let widened = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(endsOnly)",
                key: fixture.key(.operator),
                body: #"{"events": ["activity.ended", "sending.held"], "url": "https://ends2.example.com/"}"#
            )
            #expect(widened.status == .ok, "\(widened.text)")
            #expect(widened.json["url"]?.stringValue == "https://ends2.example.com/" && widened.json["events"].items.count == 2)
            try await fixture.holdSending(true)
            #expect(try await fixture.deliveries(endsOnly) == 1)
            #expect(try await fixture.deliveries(everything) == 2)
        }
    }

    @Test func aRotatedSecretKeepsThePreviousOneForADay() async throws {
        let masterKey = MasterKey.random()
        try await APIFixture.with("webhook_rotate", settings: { $0.masterKey = masterKey }) { fixture, client in
            let created = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.operator),
                body: #"{"url": "https://hooks.example.com/"}"#
            )
            let id = try #require(created.json["id"]?.stringValue)
            let first = try #require(created.json["secret"]?.stringValue)
            let before = try await fixture.sealedSecrets(id)

            let rotated = try await client.send(.post, "\(Self.app)/webhooks/\(id)/secret:rotate", key: fixture.key(.operator))
            #expect(rotated.status == .ok, "\(rotated.text)")
            let second = try #require(rotated.json["secret"]?.stringValue)
            #expect(second != first && second.hasPrefix("whsec_"))
            #expect(rotated.json["previousSecretExpiresAt"]?.stringValue != nil)
            let after = try await fixture.sealedSecrets(id)
            #expect(after.previous == before.current)
            let uuid = try #require(UUID(uuidString: id))
            #expect(try WebhookSecret.open(after.current, for: uuid, with: masterKey).text == second)
            let expiry = try #require(after.expiresIn)
            #expect(abs(expiry - 24 * 3600) < 120, "\(expiry)")

            let unknown = try await client.send(.post, "\(Self.app)/webhooks/\(UUID())/secret:rotate", key: fixture.key(.operator))
            #expect(unknown.status == .notFound && unknown.errorField == "webhookId")
        }
    }

    @Test func anEndpointIsRemoved() async throws {
        try await APIFixture.with("webhook_remove", settings: { $0.masterKey = .random() }) { fixture, client in
            let id = try await fixture.createWebhook(client, #"{"url": "https://hooks.example.com/"}"#)
            let removed = try await client.send(.delete, "\(Self.app)/webhooks/\(id)", key: fixture.key(.operator))
            #expect(removed.status == .noContent && removed.body.readableBytes == 0)
            #expect(try await client.send(.get, "\(Self.app)/webhooks/\(id)", key: fixture.key(.operator)).status == .notFound)
            let again = try await client.send(.delete, "\(Self.app)/webhooks/\(id)", key: fixture.key(.operator))
            #expect(again.status == .notFound && again.errorCode == "not_found" && again.errorField == "webhookId")
            let notUUID = try await client.send(.get, "\(Self.app)/webhooks/not-a-uuid", key: fixture.key(.operator))
            #expect(notUUID.status == .notFound && notUUID.errorField == "webhookId")
            #expect(try await fixture.count("webhook_endpoints") == 0)
        }
    }

    @Test func badURLsEventTypesBodiesAndTheSeventeenthEndpointAreRefused() async throws {
        try await APIFixture.with("webhook_refusals", settings: { $0.masterKey = .random() }) { fixture, client in
            let refusals: [(body: String, status: Int, code: String, field: String?)] = [
                (#"{"url": "ftp://hooks.example.com/"}"#, 422, "invalid", "url"),
                (#"{"url": "http://hooks.example.com/"}"#, 422, "invalid", "url"),
                (#"{"url": "http://169.254.169.254/latest/meta-data"}"#, 422, "invalid", "url"),
                (#"{"url": "https://169.254.169.254/"}"#, 422, "invalid", "url"),
                (#"{"url": "https://10.1.2.3/hook"}"#, 422, "invalid", "url"),
                (#"{"url": "https://[::1]/hook"}"#, 422, "invalid", "url"),
                (#"{"url": "https://2130706433/hook"}"#, 422, "invalid", "url"),
                (#"{"url": "https://user:pw@hooks.example.com/"}"#, 422, "invalid", "url"),
                (#"{"url": "/relative"}"#, 422, "invalid", "url"),
                (#"{"url": "https://hooks.example.com/\#(String(repeating: "a", count: 2100))"}"#, 422, "invalid", "url"),
                (#"{"url": "https://hooks.example.com/", "events": ["activity.exploded"]}"#, 422, "invalid", "events"),
                (#"{"url": "https://hooks.example.com/", "events": "activity.ended"}"#, 400, "malformed_request", "events"),
                (#"{"events": []}"#, 400, "malformed_request", "url"),
                (#"{"url": "#, 400, "malformed_request", nil),
            ]
            for refusal in refusals {
                let answer = try await client.send(.post, "\(Self.app)/webhooks", key: fixture.key(.operator), body: refusal.body)
                #expect(answer.status.code == refusal.status, "\(refusal.body): \(answer.text)")
                #expect(answer.errorCode == refusal.code && answer.errorField == refusal.field, "\(refusal.body): \(answer.text)")
            }
            #expect(try await fixture.count("webhook_endpoints") == 0)

            var ids: [String] = []
            for index in 0..<WebhookEndpoints.limit {
                ids.append(try await fixture.createWebhook(client, #"{"url": "https://hooks.example.com/\#(index)"}"#))
            }
            let seventeenth = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.operator),
                body: #"{"url": "https://hooks.example.com/17"}"#
            )
            #expect(seventeenth.status == .conflict && seventeenth.errorCode == "limit_reached", "\(seventeenth.text)")
            #expect(try await fixture.count("webhook_endpoints") == WebhookEndpoints.limit)

            let badPatch = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(ids[0])",
                key: fixture.key(.operator),
                body: #"{"url": "http://198.51.100.7/"}"#
            )
            #expect(badPatch.status.code == 422 && badPatch.errorField == "url", "\(badPatch.text)")
            let badEvents = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(ids[0])",
                key: fixture.key(.operator),
                body: #"{"events": ["nope"]}"#
            )
            #expect(badEvents.status.code == 422 && badEvents.errorField == "events", "\(badEvents.text)")
            let badEnabled = try await client.send(
                .patch,
                "\(Self.app)/webhooks/\(ids[0])",
                key: fixture.key(.operator),
                body: #"{"enabled": "yes"}"#
            )
            #expect(badEnabled.status == .badRequest && badEnabled.errorField == "enabled", "\(badEnabled.text)")
        }
    }

    @Test func privateAndLoopbackAddressesAreAcceptedWhenAllowed() async throws {
        let settings: (inout LivecastApplication.Settings) -> Void = {
            $0.masterKey = .random()
            $0.webhookAllowPrivate = true
        }
        try await APIFixture.with("webhook_allow_private", settings: settings) { fixture, client in
            for url in ["http://127.0.0.1:9000/hook", "http://localhost/hook", "https://10.0.0.7/hook", "http://[::1]:8080/"] {
                let answer = try await client.send(.post, "\(Self.app)/webhooks", key: fixture.key(.operator), body: #"{"url": "\#(url)"}"#)
                #expect(answer.status == .created, "\(url): \(answer.text)")
            }
            let publicHTTP = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.operator),
                body: #"{"url": "http://10.0.0.7/hook"}"#
            )
            #expect(publicHTTP.status.code == 422 && publicHTTP.errorField == "url", "http is for this host only: \(publicHTTP.text)")
        }
    }

    @Test func withoutAMasterKeyNoSecretCanBeMade() async throws {
        try await APIFixture.with("webhook_no_master_key") { fixture, client in
            let refused = try await client.send(
                .post,
                "\(Self.app)/webhooks",
                key: fixture.key(.operator),
                body: #"{"url": "https://hooks.example.com/"}"#
            )
            #expect(refused.status == .conflict && refused.errorCode == "master_key_required", "\(refused.text)")
            #expect(try await fixture.count("webhook_endpoints") == 0)
        }
    }

    @Test func failedDeliveriesAreListedAndReplayed() async throws {
        try await APIFixture.with("webhook_failed", settings: { $0.masterKey = .random() }) { fixture, client in
            let id = try await fixture.createWebhook(client, #"{"url": "https://hooks.example.com/"}"#)
            try await fixture.holdSending(true)
            try await fixture.holdSending(false)
            try await fixture.client.query(
                """
                UPDATE webhook_deliveries SET state = 'failed', attempts = 9, failed_at = now(), last_error = 'HTTP 500'
                WHERE endpoint_id = \(UUID(uuidString: id)!)
                """
            )
            try await fixture.client.query(
                "UPDATE webhook_endpoints SET next_attempt_at = now() + interval '1 hour', consecutive_failures = 9 WHERE id = \(UUID(uuidString: id)!)"
            )
            let shown = try await client.send(.get, "\(Self.app)/webhooks/\(id)", key: fixture.key(.operator))
            #expect(shown.json["delivery"]?["failed"]?.intValue == 2 && shown.json["delivery"]?["pending"]?.intValue == 0, "\(shown.text)")
            #expect(shown.json["delivery"]?["consecutiveFailures"]?.intValue == 9)

            let page = try await client.send(.get, "\(Self.app)/webhooks/\(id)/failed?limit=1", key: fixture.key(.operator))
            #expect(page.status == .ok, "\(page.text)")
            let first = try #require(page.json["deliveries"].items.first)
            #expect(first["attempts"]?.intValue == 9 && first["lastError"]?.stringValue == "HTTP 500")
            #expect(first["event"]?["type"]?.stringValue == "sending.held" && first["failedAt"]?.stringValue != nil)
            #expect(first["event"]?["app"]?["bundleId"]?.stringValue == "com.example.game")
            let next = try #require(page.json["next"]?.intValue)
            let rest = try await client.send(.get, "\(Self.app)/webhooks/\(id)/failed?after=\(next)", key: fixture.key(.operator))
            #expect(rest.json["deliveries"].items.map { $0["event"]?["type"]?.stringValue } == ["sending.resumed"] && rest.json["next"] == nil)
            let badLimit = try await client.send(.get, "\(Self.app)/webhooks/\(id)/failed?limit=0", key: fixture.key(.operator))
            #expect(badLimit.status.code == 422 && badLimit.errorField == "limit")

            let replayed = try await client.send(.post, "\(Self.app)/webhooks/\(id)/failed:replay", key: fixture.key(.operator))
            #expect(replayed.status == .accepted && replayed.json["replayed"]?.intValue == 2, "\(replayed.text)")
            let rows = try await fixture.client.query(
                """
                SELECT count(*) FILTER (WHERE d.state = 'pending' AND d.attempts = 0)::int, bool_and(w.next_attempt_at <= now())
                FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                """
            )
            for try await (pending, due) in rows.decode((Int, Bool).self) {
                #expect(pending == 2 && due)
            }
            let emptied = try await client.send(.get, "\(Self.app)/webhooks/\(id)/failed", key: fixture.key(.operator))
            #expect(emptied.json["deliveries"].items.isEmpty)
            let again = try await client.send(.post, "\(Self.app)/webhooks/\(id)/failed:replay", key: fixture.key(.operator))
            #expect(again.status == .accepted && again.json["replayed"]?.intValue == 0)
            let unknown = try await client.send(.post, "\(Self.app)/webhooks/\(UUID())/failed:replay", key: fixture.key(.operator))
            #expect(unknown.status == .notFound)
            let unknownList = try await client.send(.get, "\(Self.app)/webhooks/\(UUID())/failed", key: fixture.key(.operator))
            #expect(unknownList.status == .notFound)
        }
    }
}

extension APIFixture {
    /// Creates a webhook endpoint with an operator key. - Returns: Its id.
    func createWebhook(_ client: any TestClientProtocol, _ body: String) async throws -> String {
        let created = try await client.send(.post, "/v1/apps/com.example.game/webhooks", key: self.key(.operator), body: body)
        #expect(created.status == .created, "\(created.text)")
        return try #require(created.json["id"]?.stringValue)
    }

    /// Holds the fixture app's sending, or lets it go: a `sending.held` or `sending.resumed` event.
    func holdSending(_ held: Bool) async throws {
        if held {
            try await self.client.query("UPDATE apps SET sending_held_at = now(), sending_held_reason = 'test' WHERE id = \(self.store.appID)")
        } else {
            try await self.client.query("UPDATE apps SET sending_held_at = NULL, sending_held_reason = NULL WHERE id = \(self.store.appID)")
        }
    }

    /// The deliveries made for an endpoint.
    func deliveries(_ id: String) async throws -> Int {
        let rows = try await self.client.query("SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = \(UUID(uuidString: id)!)")
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// An endpoint's sealed secrets as stored, and how long until the previous one expires, in seconds.
    func sealedSecrets(_ id: String) async throws -> (current: Data, previous: Data?, expiresIn: Double?) {
        let rows = try await self.client.query(
            """
            SELECT secret_sealed, previous_secret_sealed, extract(epoch FROM previous_secret_expires_at - now())::float8
            FROM webhook_endpoints WHERE id = \(UUID(uuidString: id)!)
            """
        )
        for try await (current, previous, expiresIn) in rows.decode((ByteBuffer, ByteBuffer?, Double?).self) {
            return (Data(current.readableBytesView), previous.map { Data($0.readableBytesView) }, expiresIn)
        }
        throw StoreError(.notFound, "no webhook \(id)")
    }
}
