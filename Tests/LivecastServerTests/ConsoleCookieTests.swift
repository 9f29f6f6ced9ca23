import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastStore
import LivecastTesting
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

    private static func page(_ client: any TestClientProtocol, cookie: String) async throws -> TestResponse {
        try await client.execute(uri: "/console/feeds", method: .get, headers: [.cookie: "\(Console.sessionCookie)=\(cookie)"])
    }
}
