import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastStore
import LivecastTesting
import NIOCore
import PostgresNIO
import Testing

@testable import LivecastServer

/// A session cookie is anyone's to make up (#56): a malformed one never reaches PostgreSQL, and unknown ones spend
/// the client address's failed authentications, the API's budget, as guessed keys do.
@Suite struct ConsoleCookieTests {
    @Test func aMalformedCookieIsRefusedWithoutAskingPostgreSQL() async throws {
        try await APIFixture.with("console_cookie_malformed") { fixture, client in
            // With the sessions' table away, a lookup fails: only a cookie that skips it is sent to sign in.
            try await fixture.client.query("ALTER TABLE console_sessions RENAME TO console_sessions_away")
            for malformed in [String(repeating: "z", count: 64), String(repeating: "A", count: 64), "abc", String(repeating: "a", count: 65)] {
                let answer = try await Self.page(client, cookie: malformed)
                #expect(answer.status == .seeOther, "\(malformed.prefix(8))…: \(answer.status)")
            }
            let wellFormed = try await Self.page(client, cookie: String(repeating: "a", count: 64))
            #expect(wellFormed.status != .seeOther, "a well-formed cookie is looked up")
            try await fixture.client.query("ALTER TABLE console_sessions_away RENAME TO console_sessions")
        }
    }

    @Test func unknownCookiesSpendTheAddresssFailedAuthentications() async throws {
        let configuration = LivecastAPI.Configuration(failedAuthenticationLimit: RateLimit(ratePerSecond: 0.01, burst: 5))
        try await APIFixture.with("console_cookie_unknown", configuration: configuration, testing: .live) { _, client in
            for attempt in 0..<5 {
                let unknown = try await Self.page(client, cookie: ConsoleSessions.newToken())
                #expect(unknown.status == .seeOther, "attempt \(attempt): sent to sign in")
            }
            let limited = try await Self.page(client, cookie: ConsoleSessions.newToken())
            #expect(limited.status == .tooManyRequests, "\(limited.status)")
            #expect(limited.headers[.retryAfter].flatMap(Int.init).map { $0 >= 1 } == true)
            // The budget is the API's too: a key from the same address is refused before its lookup.
            let api = try await client.send(.get, "/v1/key", key: "lc_0000_guess")
            #expect(api.status == .tooManyRequests, "\(api.text)")
        }
    }

    /// A cookie under the plain name can be planted by a sibling subdomain or over plain http; a `__Host-` cookie
    /// only by this host over https. Over https, only the latter is read (#66 §4).
    @Test func overHTTPSOnlyTheHostPrefixedCookiesAreRead() async throws {
        let proxy = try TrustedProxies(parsing: "127.0.0.1, ::1")
        try await APIFixture.with("console_cookie_host", configuration: .init(trustedProxies: proxy), testing: .live) { fixture, client in
            let https: HTTPFields = [.xForwardedProto: "https"]
            var user = ConsoleUser(client: client)
            #expect(try await user.signIn(key: fixture.key(.operator), headers: https).status == .seeOther)
            let session = try #require(user.setCookies.compactMap(Self.hostSession).last)
            var host = https
            host[.cookie] = "__Host-\(Console.sessionCookie)=\(session)"
            #expect(try await client.execute(uri: "/console", method: .get, headers: host).status == .ok)
            var planted = https
            planted[.cookie] = "\(Console.sessionCookie)=\(session)"
            let refused = try await client.execute(uri: "/console", method: .get, headers: planted)
            #expect(refused.status == .seeOther && refused.headers[.location]?.hasPrefix("/console/login") == true, "\(refused.status)")

            // The sign-in form's token: one planted under the plain name does not let a form through (login CSRF).
            let form = try await client.execute(uri: "/console/login", method: .get, headers: https)
            let token = try #require(ConsoleUser.csrfToken(in: form.text))
            for (name, expected) in [("__Host-\(Console.signInCookie)", HTTPResponse.Status.seeOther), (Console.signInCookie, .forbidden)] {
                var headers = https
                headers[.cookie] = "\(name)=\(token)"
                headers[.contentType] = "application/x-www-form-urlencoded"
                let body = "csrf=\(token)&key=\(fixture.key(.operator))&next=%2Fconsole"
                let answer = try await client.execute(uri: "/console/login", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(answer.status == expected, "\(name): \(answer.status)")
            }
        }
    }

    /// The session token of a `Set-Cookie` for `__Host-livecast_session`.
    private static func hostSession(_ setCookie: String) -> String? {
        let prefix = "__Host-\(Console.sessionCookie)="
        guard setCookie.hasPrefix(prefix) else { return nil }
        return String(setCookie.dropFirst(prefix.count).prefix { $0 != ";" })
    }

    private static func page(_ client: any TestClientProtocol, cookie: String) async throws -> TestResponse {
        try await client.execute(uri: "/console/feeds", method: .get, headers: [.cookie: "\(Console.sessionCookie)=\(cookie)"])
    }
}
