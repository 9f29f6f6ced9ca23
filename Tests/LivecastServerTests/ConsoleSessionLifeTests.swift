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

/// How a console session lives and ends (#56): an idle timeout besides the 12-hour cap, ended sessions pruned by the
/// reaper, `__Host-` cookies and `Strict-Transport-Security` over https, and a live-progress stream that stops when
/// its key is revoked.
@Suite struct ConsoleSessionLifeTests {
    @Test func aSessionUnusedForItsIdleTimeoutEnds() async throws {
        let configuration = LivecastAPI.Configuration(consoleIdleTimeout: .seconds(600))
        try await APIFixture.with("console_idle", configuration: configuration) { fixture, client in
            var user = ConsoleUser(client: client)
            #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
            // Used five minutes ago: it opens pages, and its last use is written again.
            try await fixture.client.query("UPDATE console_sessions SET last_used_at = now() - interval '5 minutes'")
            #expect(try await user.get("/console").status == .ok)
            #expect(try await fixture.count("console_sessions WHERE last_used_at > now() - interval '1 minute'") == 1)
            // Unused for longer than the idle timeout, though far from its 12 hours: sent to sign in.
            try await fixture.client.query("UPDATE console_sessions SET last_used_at = now() - interval '11 minutes'")
            let idle = try await user.get("/console")
            #expect(idle.status == .seeOther && idle.headers[.location]?.hasPrefix("/console/login") == true, "\(idle.status)")
        }
    }

    @Test func theReaperPrunesEndedSessions() async throws {
        try await APIFixture.with("console_prune") { fixture, client in
            for _ in 0..<3 {
                var user = ConsoleUser(client: client)
                #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
            }
            try await fixture.client.query(
                """
                UPDATE console_sessions SET expires_at = now() - interval '1 second'
                WHERE token_hash = (SELECT token_hash FROM console_sessions ORDER BY created_at LIMIT 1)
                """
            )
            try await fixture.client.query(
                """
                UPDATE console_sessions SET last_used_at = now() - interval '13 hours'
                WHERE token_hash = (SELECT token_hash FROM console_sessions WHERE expires_at > now() ORDER BY created_at LIMIT 1)
                """
            )
            let reaper = Reaper(database: fixture.client, appClients: FixedAppClients.none, logger: fixture.store.logger)
            _ = try await reaper.pass()
            #expect(try await fixture.count("console_sessions") == 1, "the expired and the long-unused sessions are gone")
        }
    }

    @Test func overHTTPSTheCookiesAreHostOnlyAndBrowsersAreToldToStay() async throws {
        let proxy = try TrustedProxies(parsing: "127.0.0.1, ::1")
        try await APIFixture.with("console_https", configuration: .init(trustedProxies: proxy), testing: .live) { fixture, client in
            var secure = ConsoleUser(client: client)
            let https: HTTPFields = [.xForwardedProto: "https"]
            let form = try await secure.get("/console/login", headers: https)
            #expect(form.headers[.strictTransportSecurity] == StrictTransportSecurityMiddleware.value)
            let signInCookie = try #require(secure.setCookies.last)
            #expect(signInCookie.hasPrefix("__Host-livecast_sign_in="), "\(signInCookie)")
            let attributes = Set(signInCookie.components(separatedBy: "; ").dropFirst())
            #expect(attributes.isSuperset(of: ["Secure", "Path=/", "HttpOnly"]), "\(signInCookie)")
            let signedIn = try await secure.signIn(key: fixture.key(.operator), headers: https)
            #expect(signedIn.status == .seeOther, "\(signedIn.text)")
            let session = try #require(secure.setCookies.first { $0.hasPrefix("__Host-livecast_session=") })
            let sessionAttributes = Set(session.components(separatedBy: "; ").dropFirst())
            #expect(sessionAttributes.isSuperset(of: ["Secure", "Path=/"]) && !session.contains("Domain"), "\(session)")
            #expect(try await secure.get("/console", headers: https).status == .ok, "the __Host- cookie opens pages")
            let api = try await client.send(.get, "/v1/key", key: fixture.key(.operator), headers: https)
            #expect(api.headers[.strictTransportSecurity] == StrictTransportSecurityMiddleware.value)

            // Plain http (a laptop's demo): the plain names, and no header browsers would ignore.
            var plain = ConsoleUser(client: client)
            let plainForm = try await plain.get("/console/login")
            #expect(plainForm.headers[.strictTransportSecurity] == nil)
            #expect(plain.setCookies.last?.hasPrefix("livecast_sign_in=") == true)
        }
    }

    @Test(.timeLimit(.minutes(1))) func theLiveProgressStreamStopsWhenItsKeyIsRevoked() async throws {
        try await APIFixture.with("console_stream_revoked") { fixture, client in
            let updateID = try await fixture.pendingUpdate(client)
            var user = ConsoleUser(client: client)
            #expect(try await user.signIn(key: fixture.key(.operator)).status == .seeOther)
            // No dispatcher runs here: the update stays pending, and its stream would go on until the key is revoked.
            // The key is revoked once the stream has asked the API for the update's progress (its in-process calls
            // are counted as requests).
            let revoker = Task {
                try await eventually("the stream asked for the update's progress") {
                    try await fixture.scrapeMetrics().text.contains(
                        #"livecast_http_requests_total{route="/v1/apps/{bundleId}/updates/{updateId}",method="GET",status="200"}"#
                    )
                }
                try await fixture.client.query("UPDATE api_keys SET revoked_at = now() WHERE role = 'operator'")
            }
            let stream = try await user.get("/console/updates/\(updateID)/progress")
            try await revoker.value
            #expect(stream.text.contains("event: progress"), "\(stream.text)")
            #expect(stream.text.hasSuffix(#"event: ended\#ndata: {"reason":"revoked"}\#n\#n"#), "\(stream.text.suffix(200))")
        }
    }
}
