import APNsEmulator
import Crypto
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

/// The console over HTTP, without a browser: sign-in and its cookies, CSRF, roles as in the API, revocation, every
/// page. (ConsoleBrowserTests drives it in Chromium.)
@Suite struct ConsoleTests {
    @Test func signingInOpensASessionThatHoldsNeitherTheKeyNorItsOwnToken() async throws {
        try await APIFixture.with("console_sign_in") { fixture, client in
            var user = ConsoleUser(client: client)
            let away = try await user.get("/console/feeds")
            #expect(away.status == .seeOther && away.headers[.location] == "/console/login?next=%2Fconsole%2Ffeeds")
            let key = fixture.key(.operator)
            let signedIn = try await user.signIn(key: key)
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/console", "\(signedIn.text)")
            let session = try #require(user.setCookies.first { $0.hasPrefix("\(Console.sessionCookie)=") })
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console"] { #expect(session.contains(attribute), "\(session)") }
            #expect(!session.contains("Secure"), "a plain-HTTP request gets no Secure cookie: \(session)")
            let token = try #require(user.cookies[Console.sessionCookie])
            #expect(!token.contains(key) && !user.setCookies.joined().contains(key))
            // PostgreSQL holds the token's SHA-256 only.
            let hash = ByteBuffer(bytes: Array(SHA256.hash(data: Data(token.utf8))))
            let rows = try await fixture.client.query("SELECT count(*)::int FROM console_sessions WHERE token_hash = \(hash)")
            for try await count in rows.decode(Int.self) { #expect(count == 1) }
            let stored = try await fixture.client.query(
                "SELECT count(*)::int FROM console_sessions WHERE position(\(token) IN encode(token_hash, 'hex')) > 0"
            )
            for try await count in stored.decode(Int.self) { #expect(count == 0) }

            let overview = try await user.get("/console")
            #expect(overview.status == .ok && overview.text.contains("com.example.game") && overview.text.contains("sandbox environment"))
            var stranger = ConsoleUser(client: client)
            let wrong = try await stranger.signIn(key: "lc_0000_nothing")
            #expect(wrong.status == .unauthorized && wrong.text.contains("was not accepted"))

            _ = try await user.post("/console/logout")
            let after = try await user.get("/console")
            #expect(after.status == .seeOther, "signed out, the session no longer opens pages")
        }
    }

    @Test func aFormWithoutItsSessionsTokenIsRefusedAndChangesNothing() async throws {
        try await APIFixture.withEmulator("console_csrf") { fixture, client, _, _ in
            var user = ConsoleUser(client: client)
            try await user.signIn(key: fixture.key(.admin))
            _ = try await user.get("/console/channels")
            let keysBefore = try await fixture.count("api_keys")
            let refused = try await user.post("/console/channels", form: ["storagePolicy": "noStorage"], token: false)
            #expect(refused.status == .forbidden && refused.text.contains("csrf_token_missing"), "\(refused.text)")
            let forged = try await user.post(
                "/console/channels",
                form: ["storagePolicy": "noStorage", "csrf": String(repeating: "0", count: 64)],
                token: false
            )
            #expect(forged.status == .forbidden)
            let keyRefused = try await user.post("/console/keys", form: ["role": "admin"], token: false)
            #expect(keyRefused.status == .forbidden)
            #expect(try await fixture.count("channels") == 0)
            #expect(try await fixture.count("api_keys") == keysBefore)
            let logoutRefused = try await user.post("/console/logout", token: false)
            #expect(logoutRefused.status == .forbidden)
            #expect(try await user.get("/console").status == .ok, "the session still works")
            var newcomer = ConsoleUser(client: client)
            let signInRefused = try await newcomer.post("/console/login", form: ["key": fixture.key(.admin)], token: false)
            #expect(signInRefused.status == .forbidden)
            // Without a session there is no token to carry: refused too, not sent to sign in.
            for path in ["/console/channels", "/console/logout", "/console/keys"] {
                let sessionless = try await newcomer.post(path, form: ["storagePolicy": "noStorage", "role": "admin"], token: false)
                #expect(sessionless.status == .forbidden && sessionless.text.contains("Sign in"), "\(path): \(sessionless.status)")
            }

            let created = try await user.post("/console/channels", form: ["storagePolicy": "mostRecentMessage"])
            #expect(created.status == .ok && created.text.contains("at APNs and registered it"), "\(created.text)")
            #expect(try await fixture.count("channels") == 1)
        }
    }

    @Test func aBackendKeyReadsButCannotRetireAChannelOrReplayOrManageKeys() async throws {
        try await APIFixture.withEmulator("console_roles") { fixture, client, _, _ in
            let app = "/v1/apps/com.example.game"
            let channel = try await client.send(.post, "\(app)/channels", key: fixture.key(.operator), body: #"{"storagePolicy": "noStorage"}"#)
            let channelID = try #require(channel.json["channelId"]?.stringValue)
            _ = try await client.send(
                .put,
                "\(app)/activities/order-7",
                key: fixture.key(.backend),
                body: #"{"attributesType": "DeliveryAttributes", "pushToken": "abcd"}"#
            )
            let letter = try await fixture.deadLetter(activityKey: "order-7")
            var backend = ConsoleUser(client: client)
            try await backend.signIn(key: fixture.key(.backend))
            #expect(try await backend.get("/console").status == .ok)
            #expect(try await backend.get("/console/deliveries?updateId=1").status == .ok)
            #expect(try await backend.get("/console/activities/order-7").status == .ok)
            let retire = try await backend.post("/console/channels/retire", form: ["channelId": channelID])
            #expect(retire.status == .forbidden && retire.text.contains("operator"), "\(retire.text)")
            let listed = try await client.send(
                .get,
                "\(app)/channels/\(channelID.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)",
                key: fixture.key(.operator)
            )
            #expect(listed.json["state"]?.stringValue == "active")
            let replay = try await backend.post("/console/dead-letters/\(letter)/replay")
            #expect(replay.status == .forbidden)
            #expect(try await fixture.count("owed_pushes") == 0)
            #expect(try await backend.get("/console/keys").status == .forbidden)
            let keys = try await backend.post("/console/keys", form: ["role": "admin"])
            #expect(keys.status == .forbidden)
            #expect(!(try await backend.get("/console").text.contains("href=\"/console/keys\"")), "no Keys link for a backend key")

            var operatorUser = ConsoleUser(client: client)
            try await operatorUser.signIn(key: fixture.key(.operator))
            _ = try await operatorUser.get("/console/dead-letters")
            let replayed = try await operatorUser.post("/console/dead-letters/\(letter)/replay")
            #expect(replayed.status == .ok && replayed.text.contains("replayed: requeued"), "\(replayed.text)")
            #expect(try await fixture.count("owed_pushes") == 1)

            // A followed channel is retired only after the API's warning.
            let follower = try await client.send(
                .put,
                "\(app)/activities/watcher",
                key: fixture.key(.backend),
                body: #"{"attributesType": "GameAttributes", "channelId": "\#(channelID)"}"#
            )
            #expect(follower.status == .created, "\(follower.text)")
            _ = try await operatorUser.get("/console/channels")
            let warned = try await operatorUser.post("/console/channels/retire", form: ["channelId": channelID])
            #expect(warned.status == .conflict && warned.text.contains("1 running activities follow the channel"), "\(warned.text)")
            #expect(warned.text.contains("Retire anyway"))
            let forced = try await operatorUser.post("/console/channels/retire", form: ["channelId": channelID, "force": "true"])
            #expect(forced.status == .ok && forced.text.contains("deleted at APNs and retired"), "\(forced.text)")
            let retired = try await client.send(.get, "\(app)/channels/\(InProcessAPI.segment(channelID))", key: fixture.key(.operator))
            #expect(retired.json["state"]?.stringValue == "retired")
        }
    }

    @Test func aRevokedKeysSessionEndsAtOnceAndANewKeyIsShownOnce() async throws {
        try await APIFixture.with("console_revoked") { fixture, client in
            var admin = ConsoleUser(client: client)
            try await admin.signIn(key: fixture.key(.admin))
            _ = try await admin.get("/console/keys")
            let created = try await admin.post("/console/keys", form: ["role": "operator"])
            #expect(created.status == .ok)
            let shown = try #require(created.text.range(of: #"lc_[0-9a-f]+_[0-9a-f]+"#, options: .regularExpression).map { String(created.text[$0]) })
            #expect(!(try await admin.get("/console/keys").text.contains(shown)), "a key is shown once")
            var newcomer = ConsoleUser(client: client)
            #expect(try await newcomer.signIn(key: shown).status == .seeOther)
            #expect(try await newcomer.get("/console").status == .ok)

            let keyID = try #require(try await client.send(.get, "/v1/key", key: shown).json["keyId"]?.intValue)
            _ = try await admin.get("/console/keys")
            let revoked = try await admin.post("/console/keys/\(keyID)/revoke")
            #expect(revoked.status == .ok && revoked.text.contains("was revoked"), "\(revoked.text)")
            let after = try await newcomer.get("/console")
            #expect(after.status == .seeOther && after.headers[.location]?.hasPrefix("/console/login") == true)
        }
    }

    @Test func theKeysPageOffersTheClientRoleAndAClientKeyCannotSignIn() async throws {
        try await APIFixture.with("console_client_keys") { fixture, client in
            var admin = ConsoleUser(client: client)
            try await admin.signIn(key: fixture.key(.admin))
            let page = try await admin.get("/console/keys")
            #expect(page.text.contains(#"<option value="client">client</option>"#))
            let created = try await admin.post("/console/keys", form: ["role": "client"])
            #expect(created.status == .ok && created.text.contains("New client key"), "\(created.text)")
            let shown = try #require(created.text.range(of: #"lc_[0-9a-f]+_[0-9a-f]+"#, options: .regularExpression).map { String(created.text[$0]) })
            let registered = try await client.send(
                .put,
                "/v1/apps/com.example.game/push-to-start-tokens/phone-1/GameAttributes",
                key: shown,
                body: #"{"token": "aabb"}"#,
                headers: [ClientKeys.deviceHeader: "phone-1"]
            )
            #expect(registered.status == .created, "\(registered.text)")
            var app = ConsoleUser(client: client)
            #expect(try await app.signIn(key: shown).status == .forbidden)
        }
    }

    @Test func failedSignInsAreRateLimitedAndTheCookieIsSecureBehindAnHTTPSProxy() async throws {
        var configuration = LivecastAPI.Configuration()
        configuration.failedAuthenticationLimit = RateLimit(ratePerSecond: 0.01, burst: 3)
        configuration.trustedProxies = try TrustedProxies(parsing: "127.0.0.1,::1")
        try await APIFixture.with("console_limits", configuration: configuration, testing: .live) { fixture, client in
            let proxied: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "203.0.113.7", .xForwardedProto: "https"]
            var statuses: [Int] = []
            var retryAfter: String?
            for _ in 0..<4 {
                var guesser = ConsoleUser(client: client)
                let answer = try await guesser.signIn(key: "lc_abcdef_guess", headers: proxied)
                statuses.append(Int(answer.status.code))
                retryAfter = answer.headers[.retryAfter]
            }
            #expect(statuses == [401, 401, 401, 429], "\(statuses)")
            // The refusal's page says when to try again, as the API's refusal does.
            #expect(retryAfter.flatMap(Int.init).map { $0 >= 1 } == true, "Retry-After: \(retryAfter ?? "none")")
            // Another client behind the same proxy is not locked out.
            var user = ConsoleUser(client: client)
            let signedIn = try await user.signIn(
                key: fixture.key(.operator),
                headers: [HTTPField.Name("X-Forwarded-For")!: "198.51.100.2", .xForwardedProto: "https"]
            )
            #expect(signedIn.status == .seeOther)
            let session = try #require(user.setCookies.first { $0.hasPrefix("__Host-\(Console.sessionCookie)=") })
            #expect(session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Strict"), "\(session)")
        }
    }

    @Test func everyPageRendersAndUnknownOnesSayNotFound() async throws {
        try await APIFixture.withEmulator("console_pages") { fixture, client, emulator, dispatcher in
            let app = "/v1/apps/com.example.game"
            _ = try await client.send(
                .put,
                "\(app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            let device = try await fixture.registeredDevice(osVersion: "17.5", emulator: emulator, client: client)
            let start = try await client.send(
                .post,
                "\(app)/feeds/game-1/start",
                key: fixture.key(.backend),
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            let startID = try #require(start.json["updateId"]?.intValue, "\(start.text)")
            #expect(try await dispatcher.drain() == 1)
            var admin = ConsoleUser(client: client)
            try await admin.signIn(key: fixture.key(.admin))
            let pages: [(String, String)] = [
                ("/console", "Pushes in the last hour"),
                ("/console/feeds", "game-1"),
                ("/console/feeds/game-1", "Updates, newest first"),
                ("/console/channels", "Livecast's registry"),
                ("/console/deliveries", "Search by the apns-id"),
                ("/console/deliveries?updateId=\(startID)", "delivered"),
                ("/console/dead-letters", "No dead letters"),
                ("/console/keys", "Create a key"),
                ("/console/devices/\(device.id)", "GameAttributes"),
            ]
            for (path, expected) in pages {
                let page = try await admin.get(path)
                #expect(page.status == .ok && page.text.contains(expected), "\(path): \(page.status) \(page.text)")
                #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            }
            #expect(try await admin.get("/console/feeds/none").status == .notFound)
            #expect(try await admin.get("/console/nothing-here").status == .notFound)
            let script = try await client.execute(uri: "/console/assets/console.js", method: .get)
            #expect(script.status == .ok && script.text.contains("EventSource"))
        }
    }
}
