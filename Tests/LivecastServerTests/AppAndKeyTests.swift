import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// `GET /v1/apps/{bundleId}` and the keys routes.
@Suite struct AppAndKeyTests {
    @Test func theAppShowsWithoutItsSigningKey() async throws {
        try await APIFixture.with("apps_get") { fixture, client in
            let response = try await client.send(.get, "/v1/apps/com.example.game", key: fixture.key(.admin))
            #expect(response.status == .ok)
            #expect(response.json["bundleId"]?.stringValue == "com.example.game")
            #expect(response.json["environment"]?.stringValue == "sandbox")
            #expect(response.json["teamId"]?.stringValue == "TEAM123456")
            #expect(!response.text.contains("p8"))
        }
    }

    @Test func aKeyIsShownOnceWorksAndStopsWhenRevoked() async throws {
        try await APIFixture.with("keys_lifecycle") { fixture, client in
            let created = try await client.send(.post, "/v1/apps/com.example.game/keys", key: fixture.key(.admin), body: #"{"role": "operator"}"#)
            #expect(created.status == .created)
            let key = try #require(created.json["key"]?.stringValue)
            let keyID = try #require(created.json["keyId"]?.intValue)
            #expect(key.hasPrefix("lc_"))
            #expect(try await client.send(.get, "/v1/apps/com.example.game/feeds/none", key: key).status == .notFound)

            let listed = try await client.send(.get, "/v1/apps/com.example.game/keys", key: fixture.key(.admin))
            #expect(listed.status == .ok)
            #expect(!listed.text.contains(key))
            #expect(listed.json["keys"].map { "\($0)" }?.contains("operator") == true)
            let stored = try await fixture.client.query("SELECT count(*)::int FROM api_keys WHERE length(secret_hash) = 32")
            // The fixture's keys, the other app's, and this one.
            for try await count in stored.decode(Int.self) { #expect(count == fixture.keys.count + 2) }

            let revoked = try await client.send(.delete, "/v1/apps/com.example.game/keys/\(keyID)", key: fixture.key(.admin))
            #expect(revoked.status == .ok)
            #expect(revoked.json["revokedAt"]?.stringValue != nil)
            #expect(try await client.send(.get, "/v1/apps/com.example.game/feeds/none", key: key).status == .unauthorized)
        }
    }

    @Test func badKeyRequestsAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("keys_bad") { fixture, client in
            let path = "/v1/apps/com.example.game/keys"
            let cases: [(String, Int, String?)] = [
                (#"{"role": "root"}"#, 422, "role"),
                (#"{"role": 1}"#, 400, "role"),
                (#"{}"#, 400, "role"),
                (#"{"role": "admin""#, 400, nil),
            ]
            for (body, status, field) in cases {
                let response = try await client.send(.post, path, key: fixture.key(.admin), body: body)
                #expect(response.status.code == status, "\(body): \(response.text)")
                #expect(response.errorField == field, "\(body)")
            }
            #expect(try await fixture.count("api_keys") == fixture.keys.count + 1, "the fixture's keys and the other app's")
            #expect(try await client.send(.delete, "\(path)/99", key: fixture.key(.admin)).status == .notFound)
            #expect(try await client.send(.delete, "\(path)/abc", key: fixture.key(.admin)).status == .badRequest)
            // Another app's key id is not this app's.
            let others = try await APIKeys(client: fixture.client, logger: fixture.store.logger).list(appID: fixture.otherAppID)
            let otherID = try #require(others.first?.id)
            #expect(try await client.send(.delete, "\(path)/\(otherID)", key: fixture.key(.admin)).status == .notFound)
            #expect(try await fixture.count("api_keys WHERE revoked_at IS NOT NULL") == 0)
        }
    }
}
