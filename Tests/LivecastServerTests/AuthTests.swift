import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastServer
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// API keys: authentication, roles, isolation between apps, rate limits.
@Suite struct AuthTests {
    /// How long a key change may take to reach the server: its notification arrives within milliseconds on a quiet
    /// machine, but the whole suite shares two cores.
    private static let revocationPatience: Duration = .seconds(60)

    private let tokenPath = "/v1/apps/com.example.game/push-to-start-tokens/device-1/GameAttributes"

    @Test func missingMalformedAndUnknownKeysGet401() async throws {
        try await APIFixture.with("auth_401") { fixture, client in
            let admin = fixture.key(.admin)
            let wrongSecret = String(admin.dropLast()) + (admin.hasSuffix("0") ? "1" : "0")
            for key in [nil, "", "lc_nope", "lc_0123456789ab_00", "Basic abc", wrongSecret] as [String?] {
                let response = try await client.send(.put, self.tokenPath, key: key, body: #"{"token": "aa"}"#)
                #expect(response.status == .unauthorized, "\(key ?? "nil")")
                #expect(response.errorCode == "unauthenticated")
                #expect(response.headers[.wwwAuthenticate] == "Bearer")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)
        }
    }

    @Test func theBearerSchemeIsReadInAnyCaseWithTheKeysSpacesTrimmed() async throws {
        try await APIFixture.with("auth_scheme") { fixture, client in
            let key = fixture.key(.admin)
            let accepted = ["Bearer \(key)", "bearer \(key)", "BEARER  \(key)\t "]
            let refused = ["Bearer\t\(key)", "Bearer\(key)", "Bearer ", "Bearer  ", "Basic \(key)", "Bear \(key)"]
            for authorization in accepted + refused {
                let response = try await client.send(.get, "/v1/key", key: nil, headers: [.authorization: authorization])
                #expect(
                    response.status == (accepted.contains(authorization) ? .ok : .unauthorized),
                    "\(authorization.replacingOccurrences(of: key, with: "KEY"))"
                )
            }
        }
    }

    @Test func rolesAreCumulative() async throws {
        try await APIFixture.with("auth_roles") { fixture, client in
            let cases: [(String, String, APIKeys.Role)] = [
                ("GET", "/v1/apps/com.example.game/updates/1", .backend),
                ("GET", "/v1/apps/com.example.game/feeds/game-1", .operator),
                ("GET", "/v1/apps/com.example.game/keys", .admin),
            ]
            for (method, path, needed) in cases {
                for role in APIKeys.Role.allCases {
                    let response = try await client.send(HTTPRequest.Method(method) ?? .get, path, key: fixture.key(role))
                    if role >= needed {
                        #expect(response.status != .forbidden, "\(role) on \(path)")
                    } else {
                        #expect(response.status == .forbidden, "\(role) on \(path)")
                        #expect(response.errorCode == "forbidden")
                    }
                }
            }
        }
    }

    @Test func aKeyOfAnotherAppGets404ForEverythingOfThisApp() async throws {
        try await APIFixture.with("auth_isolation") { fixture, client in
            let registered = try await client.send(.put, self.tokenPath, key: fixture.key(.backend), body: #"{"token": "aabb"}"#)
            #expect(registered.status == .created)
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/apps/com.example.game"),
                (.get, "/v1/apps/com.example.game/keys"),
                (.delete, self.tokenPath),
                (.get, "/v1/apps/com.example.game/feeds/game-1"),
                (.get, "/v1/apps/com.example.unknown/keys"),
            ] {
                let response = try await client.send(method, path, key: fixture.otherKey)
                #expect(response.status == .notFound, "\(method) \(path)")
                #expect(response.errorCode == "not_found")
            }
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NULL") == 1)
            let own = try await client.send(.get, "/v1/apps/com.example.other", key: fixture.otherKey)
            #expect(own.status == .ok)
            #expect(own.json["bundleId"]?.stringValue == "com.example.other")
        }
    }

    @Test func eachKeyIsRateLimitedWithRetryAfter() async throws {
        // One token per 1,000 s, so a slow machine cannot refill the bucket between the requests, and Retry-After
        // (the time to the next token) stays within 100 s of 1,000 even when the requests take that long.
        let configuration = LivecastAPI.Configuration(rateLimit: .init(ratePerSecond: 0.001, burst: 3))
        try await APIFixture.with("auth_rate", configuration: configuration) { fixture, client in
            for _ in 0..<3 {
                #expect(try await client.send(.get, "/v1/apps/com.example.game/updates/1", key: fixture.key(.backend)).status == .notFound)
            }
            let limited = try await client.send(.get, "/v1/apps/com.example.game/updates/1", key: fixture.key(.backend))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((900...1000).contains(retryAfter), "Retry-After: \(retryAfter)")
            // Another key has its own bucket.
            #expect(try await client.send(.get, "/v1/apps/com.example.game/updates/1", key: fixture.key(.admin)).status == .notFound)
        }
    }

    @Test func anAddressWhoseKeysKeepFailingIsRefusedBeforeAnyLookup() async throws {
        // Three failures at once, then one per 1,000 s: a busy machine cannot refill it during the test (two suites
        // side by side on two cores took 27 s over these requests).
        let configuration = LivecastAPI.Configuration(failedAuthenticationLimit: .init(ratePerSecond: 0.001, burst: 3))
        try await APIFixture.with("auth_failures", configuration: configuration, testing: .live) { fixture, client in
            let path = "/v1/apps/com.example.game/updates/1"
            // Each key that does not authenticate is a 401 and spends one of the address's three.
            #expect(try await client.send(.get, path, key: fixture.key(.backend)).status == .notFound)
            for guess in ["lc_0123456789ab_00", "lc_0123456789ab_01", "nonsense"] {
                #expect(try await client.send(.get, path, key: guess).status == .unauthorized)
            }
            let refused = try await client.send(.get, path, key: "lc_0123456789ab_02")
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorCode == "rate_limited")
            let retryAfter = try #require(refused.headers[.retryAfter].flatMap { Int($0) })
            #expect((900...1000).contains(retryAfter), "Retry-After: \(retryAfter)")
            // While the address is refused, a key that authenticated before still gets through (a proxy may put
            // many clients behind one address); a key never seen is refused before any lookup.
            #expect(try await client.send(.get, path, key: fixture.key(.backend)).status == .notFound)
            #expect(try await client.send(.get, path, key: fixture.key(.operator)).status == .tooManyRequests)
            // Open routes are not behind the key middleware.
            #expect(try await client.send(.get, "/health", key: nil).status == .ok)
        }
    }

    @Test func behindATrustedProxyOneClientsBadKeysDoNotLockOutAnother() async throws {
        // Three failures at once, then one per 1,000 s, per client address and per key prefix.
        let configuration = LivecastAPI.Configuration(
            failedAuthenticationLimit: .init(ratePerSecond: 0.001, burst: 3),
            trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1")
        )
        try await APIFixture.with("auth_proxy", configuration: configuration, testing: .live) { fixture, client in
            let path = "/v1/apps/com.example.game/updates/1"
            let clientA: HTTPFields = [Self.forwardedFor: "203.0.113.7"]
            for guess in ["lc_0123456789a0_00", "lc_0123456789a1_00", "nonsense"] {
                #expect(try await client.send(.get, path, key: guess, headers: clientA).status == .unauthorized)
            }
            let refused = try await client.send(.get, path, key: "lc_0123456789a2_00", headers: clientA)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorCode == "rate_limited")
            // Client A cannot pose as another client: the proxy appends the address it saw, and that one counts.
            let spoofed: HTTPFields = [Self.forwardedFor: "198.51.100.9, 203.0.113.7"]
            #expect(try await client.send(.get, path, key: "lc_0123456789a3_00", headers: spoofed).status == .tooManyRequests)

            // Client B, behind the same proxy, with a valid key never used before, gets through.
            let clientB: HTTPFields = [Self.forwardedFor: "198.51.100.9"]
            #expect(try await client.send(.get, path, key: fixture.key(.operator), headers: clientB).status == .notFound)

            // Guesses at one key's secret from many addresses spend that prefix's budget: they get 429, and the
            // valid key itself still gets through.
            let admin = fixture.key(.admin)
            let wrongSecret = String(admin.dropLast()) + (admin.hasSuffix("0") ? "1" : "0")
            for (index, expected) in [HTTPResponse.Status.unauthorized, .unauthorized, .unauthorized, .tooManyRequests].enumerated() {
                let guesser: HTTPFields = [Self.forwardedFor: "192.0.2.\(index + 1)"]
                #expect(try await client.send(.get, path, key: wrongSecret, headers: guesser).status == expected, "guess \(index)")
            }
            #expect(try await client.send(.get, path, key: admin, headers: [Self.forwardedFor: "192.0.2.99"]).status == .notFound)
        }
    }

    @Test func anUntrustedPeersForwardedForIsIgnored() async throws {
        let configuration = LivecastAPI.Configuration(
            failedAuthenticationLimit: .init(ratePerSecond: 0.001, burst: 3),
            trustedProxies: try TrustedProxies(parsing: "10.0.0.0/8")
        )
        try await APIFixture.with("auth_untrusted_proxy", configuration: configuration, testing: .live) { fixture, client in
            let path = "/v1/apps/com.example.game/updates/1"
            for index in 0..<3 {
                let claimed: HTTPFields = [Self.forwardedFor: "203.0.113.\(index + 1)"]
                let guess = try await client.send(.get, path, key: "lc_0123456789b\(index)_00", headers: claimed)
                #expect(guess.status == .unauthorized)
            }
            // Every request counted against the peer, whatever it claimed: a fresh claimed address does not help.
            let fresh: HTTPFields = [Self.forwardedFor: "203.0.113.200"]
            let another = try await client.send(.get, path, key: "lc_0123456789b9_00", headers: fresh)
            #expect(another.status == .tooManyRequests)
            let valid = try await client.send(.get, path, key: fixture.key(.backend), headers: fresh)
            #expect(valid.status == .tooManyRequests)
        }
    }

    @Test func aRevokedKeyIsAnsweredExactlyAsAnUnknownOne() async throws {
        let configuration = LivecastAPI.Configuration(
            failedAuthenticationLimit: .init(ratePerSecond: 0.001, burst: 3),
            trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1")
        )
        try await APIFixture.with("auth_revoked", configuration: configuration, testing: .live) { fixture, client in
            let path = "/v1/apps/com.example.game/updates/1"
            let keys = APIKeys(client: fixture.client, logger: fixture.store.logger)
            let (created, revoked) = try await keys.create(appID: fixture.store.appID, role: .backend)
            // It authenticates once, so this process has seen it valid, then it is revoked.
            #expect(try await client.send(.get, path, key: revoked, headers: [Self.forwardedFor: "198.51.100.1"]).status == .notFound)
            #expect(try await keys.revoke(appID: fixture.store.appID, keyID: created.id)?.key.revokedAt != nil)
            // PostgreSQL tells the server on commit (KeyCache). Until its notification arrives, the key is still
            // remembered: wait for that from an address the comparison below does not use. The refusal spends one
            // failure of the key's prefix, so the unknown key spends one too, from another unused address.
            let watcher: HTTPFields = [Self.forwardedFor: "198.51.100.2"]
            try await eventually(within: Self.revocationPatience, "the revoked key refused") {
                try await client.send(.get, path, key: revoked, headers: watcher).status == .unauthorized
            }
            let unknown = "lc_\(String(created.prefix.reversed()))_\(String(repeating: "ab", count: 32))"
            let other: HTTPFields = [Self.forwardedFor: "198.51.100.3"]
            #expect(try await client.send(.get, path, key: unknown, headers: other).status == .unauthorized)

            var answers: [String: [String]] = [:]
            for (name, key, address) in [("revoked", revoked, "203.0.113.1"), ("unknown", unknown, "203.0.113.2")] {
                for _ in 0..<4 {
                    let response = try await client.send(.get, path, key: key, headers: [Self.forwardedFor: address])
                    // A 429's Retry-After may differ by a second between the two; its status and code may not.
                    let answer =
                        response.status == .tooManyRequests
                        ? "429 \(response.errorCode ?? "")"
                        : "\(response.status.code) \(response.headers[.wwwAuthenticate] ?? "") \(response.text)"
                    answers[name, default: []].append(answer)
                }
            }
            #expect(answers["revoked"] == answers["unknown"])
            #expect(answers["revoked"]?.first?.hasPrefix("401 Bearer") == true, "\(answers)")
            #expect(answers["revoked"]?.last?.hasPrefix("429") == true, "\(answers)")
        }
    }

    @Test func aKeyIsLookedUpOnceAndForgottenAsSoonAsPostgreSQLSaysItChanged() async throws {
        try await APIFixture.with("auth_cache", testing: .live) { fixture, client in
            let path = "/v1/apps/com.example.game/updates/1"
            let keys = APIKeys(client: fixture.client, logger: fixture.store.logger)
            let (created, key) = try await keys.create(appID: fixture.store.appID, role: .backend)
            // The server listens for changed keys before it remembers any.
            try await eventually(within: Self.revocationPatience, "the server listening for changed keys") {
                let rows = try await fixture.client.query(
                    "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%livecast_api_keys%'"
                )
                for try await count in rows.decode(Int.self) { return count > 0 }
                return false
            }
            #expect(try await client.send(.get, path, key: key).status == .notFound)

            // A change PostgreSQL does not announce (its trigger disabled) is not seen: the key is remembered.
            try await fixture.client.query("ALTER TABLE api_keys DISABLE TRIGGER api_keys_changed")
            try await fixture.client.query("UPDATE api_keys SET revoked_at = now() WHERE id = \(created.id)")
            try await fixture.client.query("ALTER TABLE api_keys ENABLE TRIGGER api_keys_changed")
            #expect(try await client.send(.get, path, key: key).status == .notFound, "the server looked the key up again")

            // The announcement makes the server forget it at once.
            try await fixture.client.query("SELECT pg_notify('livecast_api_keys', \(created.prefix))")
            try await eventually(within: Self.revocationPatience, "the revoked key refused") {
                try await client.send(.get, path, key: key).status == .unauthorized
            }

            // A revocation by another process (the CLI's) is announced by PostgreSQL itself.
            let (other, otherKey) = try await keys.create(appID: fixture.store.appID, role: .backend)
            #expect(try await client.send(.get, path, key: otherKey).status == .notFound)
            #expect(try await client.send(.get, path, key: otherKey).status == .notFound)
            _ = try await keys.revoke(appID: fixture.store.appID, keyID: other.id)
            try await eventually(within: Self.revocationPatience, "the revoked key refused") {
                try await client.send(.get, path, key: otherKey).status == .unauthorized
            }
        }
    }

    @Test func anAppsUnusableKeyFileIsNotNamedToItsClients() async throws {
        try await APIFixture.with("auth_key_path") { fixture, client in
            // com.example.other's key is the file /keys/b.p8, which does not exist.
            let response = try await client.send(.get, "/v1/apps/com.example.other/channels?source=apns", key: fixture.otherKey)
            #expect(response.errorCode != nil, "\(response.text)")
            #expect(!response.text.contains("/keys/"), "\(response.text)")
            #expect(!response.text.contains("b.p8"), "\(response.text)")
        }
    }

    private static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
}
