import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

/// Revoking a key says how many scheduled sends it made are still to go, and can cancel them (#66 §4): a leaked key's
/// sends, scheduled up to 7 days ahead, would otherwise go out after it stopped working.
@Suite struct KeyRevocationTests {
    @Test func revokingAKeyCountsItsScheduledSendsAndCanCancelThemAlone() async throws {
        try await APIFixture.with("key_revocation_sends") { fixture, client in
            let app = "/v1/apps/com.example.game"
            let admin = fixture.key(.admin)
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            let created = try await client.send(.post, "\(app)/keys", key: admin, body: #"{"role": "backend"}"#)
            let keyID = try #require(created.json["keyId"]?.intValue)
            let leaked = try #require(created.json["key"]?.stringValue)
            let sendAt = Int(Date().timeIntervalSince1970) + 3600
            var leakedSends: [Int] = []
            for home in 1...3 {
                let body = #"{"contentState": {"home": \#(home)}, "sendAt": \#(sendAt + home)}"#
                let scheduled = try await client.send(.post, "\(app)/feeds/game-1/updates", key: leaked, body: body)
                #expect(scheduled.status == .accepted, "\(scheduled.text)")
                leakedSends.append(try #require(scheduled.json["updateId"]?.intValue))
            }
            let another = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: fixture.key(.backend),
                body: #"{"contentState": {"home": 9}, "sendAt": \#(sendAt + 9)}"#
            )
            let anotherID = try #require(another.json["updateId"]?.intValue)

            // Revoked: it says what is still to go, and leaves it scheduled.
            let revoked = try await client.send(.delete, "\(app)/keys/\(keyID)", key: admin)
            #expect(revoked.status == .ok, "\(revoked.text)")
            #expect(revoked.json["revokedAt"]?.stringValue != nil)
            #expect(revoked.json["scheduledSends"]?.intValue == 3 && revoked.json["cancelledScheduledSends"]?.intValue == 0, "\(revoked.text)")
            #expect(try await client.send(.get, "\(app)/updates/\(leakedSends[0])", key: leaked).status == .unauthorized)
            for id in leakedSends + [anotherID] {
                #expect(try await Self.status(of: id, client, fixture) == "scheduled")
            }

            // Revoked again with the cancellation: its sends are cancelled, another key's are not.
            let cancelled = try await client.send(.delete, "\(app)/keys/\(keyID)?cancelScheduledSends=true", key: admin)
            #expect(cancelled.json["scheduledSends"]?.intValue == 0 && cancelled.json["cancelledScheduledSends"]?.intValue == 3, "\(cancelled.text)")
            #expect(cancelled.json["revokedAt"]?.stringValue == revoked.json["revokedAt"]?.stringValue, "revoked once")
            for id in leakedSends { #expect(try await Self.status(of: id, client, fixture) == "cancelled") }
            #expect(try await Self.status(of: anotherID, client, fixture) == "scheduled")

            let malformed = try await client.send(.delete, "\(app)/keys/\(keyID)?cancelScheduledSends=yes", key: admin)
            #expect(malformed.status == .unprocessableContent && malformed.json["error"]?["field"]?.stringValue == "cancelScheduledSends")
        }
    }

    @Test func theConsoleRevokesAKeyAndCancelsItsScheduledSends() async throws {
        try await APIFixture.with("key_revocation_console") { fixture, client in
            let app = "/v1/apps/com.example.game"
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            let created = try await client.send(.post, "\(app)/keys", key: fixture.key(.admin), body: #"{"role": "backend"}"#)
            let keyID = try #require(created.json["keyId"]?.intValue)
            let body = #"{"contentState": {"home": 1}, "sendAt": \#(Int(Date().timeIntervalSince1970) + 3600)}"#
            let scheduled = try await client.send(
                .post,
                "\(app)/feeds/game-1/updates",
                key: try #require(created.json["key"]?.stringValue),
                body: body
            )
            let sendID = try #require(scheduled.json["updateId"]?.intValue)

            var admin = ConsoleUser(client: client)
            #expect(try await admin.signIn(key: fixture.key(.admin)).status == .seeOther)
            _ = try await admin.get("/console/keys")
            let revoked = try await admin.post("/console/keys/\(keyID)/revoke")
            #expect(revoked.text.contains("1 scheduled send it made will still go out"), "\(revoked.text)")
            #expect(revoked.text.contains(#"id="cancel-scheduled-sends""#))
            let cancelled = try await admin.post("/console/keys/\(keyID)/revoke", form: ["cancelScheduledSends": "true"])
            #expect(cancelled.text.contains("1 scheduled send it made was cancelled"), "\(cancelled.text)")
            #expect(try await Self.status(of: sendID, client, fixture) == "cancelled")
        }
    }

    /// A scheduled send's status, as its app's backend key reads it.
    private static func status(of id: Int, _ client: any TestClientProtocol, _ fixture: APIFixture) async throws -> String? {
        try await client.send(.get, "/v1/apps/com.example.game/updates/\(id)", key: fixture.key(.backend)).json["status"]?.stringValue
    }
}
