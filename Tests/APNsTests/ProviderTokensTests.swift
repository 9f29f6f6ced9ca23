import Crypto
import Foundation
import LivecastCore
import NIOCore
import Testing

@testable import APNs

/// Provider tokens: ES256 JWTs with Apple's header and claims, cached and refreshed by the rules, with a moved clock.
@Suite struct ProviderTokensTests {
    private let key = P256.Signing.PrivateKey()

    private func tokens(_ clock: ManualWallClock) -> ProviderTokens {
        ProviderTokens(credentials: APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: self.key), clock: clock)
    }

    private func decode(_ part: Substring) throws -> JSONValue {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return try JSONDecoder().decode(JSONValue.self, from: try #require(Data(base64Encoded: base64)))
    }

    @Test func tokenHasApplesHeaderClaimsAndAValidSignature() throws {
        let clock = ManualWallClock(start: 1_800_000_000)
        let token = self.tokens(clock).token()
        let parts = token.jwt.split(separator: ".")
        #expect(parts.count == 3)
        #expect(try self.decode(parts[0]) == .object(["alg": .string("ES256"), "kid": .string("KEY1234567")]))
        // iat is a JSON number, not a string.
        #expect(try self.decode(parts[1]) == .object(["iss": .string("TEAM123456"), "iat": .int(1_800_000_000)]))
        var signature = parts[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        signature += String(repeating: "=", count: (4 - signature.count % 4) % 4)
        let raw = try #require(Data(base64Encoded: signature))
        #expect(raw.count == 64)
        #expect(
            self.key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: raw), for: Data("\(parts[0]).\(parts[1])".utf8))
        )
    }

    @Test func tokenIsCachedForFiftyMinutesThenReplaced() {
        let clock = ManualWallClock(start: 1_800_000_000)
        let tokens = self.tokens(clock)
        let first = tokens.token()
        clock.advance(by: 49 * 60 + 59)
        #expect(tokens.token() == first)
        clock.advance(by: 1)
        let second = tokens.token()
        #expect(second != first)
        #expect(second.issuedAt == 1_800_000_000 + 50 * 60)
    }

    @Test func expiredTokenIsReplacedOnlyAfterTwentyMinutes() {
        let clock = ManualWallClock(start: 1_800_000_000)
        let tokens = self.tokens(clock)
        let first = tokens.token()
        clock.advance(by: 19 * 60)
        #expect(tokens.replace(rejected: first) == nil)
        #expect(tokens.token() == first)
        clock.advance(by: 60)
        let second = tokens.replace(rejected: first)
        #expect(second != nil && second != first)
        // A second rejection of the old token (another connection) gets the new one, not a third.
        #expect(tokens.replace(rejected: first) == second)
        #expect(tokens.token() == second)
    }

    @Test func anExpiredTokenAnswerSendsTheRequestOnceMoreWithANewerToken() {
        let clock = ManualWallClock(start: 1_800_000_000)
        let authorization = ProviderTokenAuthorization(tokens: self.tokens(clock))
        func answer(_ reason: String) -> APNsOutcome {
            APNsOutcome(response: HTTP2Response(status: 403, headers: [], body: Array(#"{"reason":"\#(reason)"}"#.utf8), attempts: 1, latency: .zero))
        }
        func sent(with authorization: String) -> HTTP2Exchange {
            let template = HeaderTemplate(method: "POST", authority: "localhost", headers: [])
            let exchange = HTTP2Exchange(template: template, path: "/3/device/abcd", extraHeaders: [], body: [], deadline: .now() + .seconds(15)) {
                _,
                _ in
            }
            exchange.authorization = authorization
            exchange.attempts = 1
            return exchange
        }
        let expired = answer("ExpiredProviderToken")
        let first = authorization.headerValue()
        #expect(first.hasPrefix("bearer "))
        // A token younger than 20 minutes is not re-signed: the answer stands.
        clock.advance(by: 19 * 60)
        #expect(!authorization.mayResend(sent(with: first), answered: expired))
        #expect(authorization.headerValue() == first)
        // At 20 minutes it is re-signed, once.
        clock.advance(by: 60)
        let exchange = sent(with: first)
        #expect(authorization.mayResend(exchange, answered: expired))
        let second = authorization.headerValue()
        #expect(second != first)
        // Another request refused with the old token goes out again with the new one; no third token is made.
        #expect(authorization.mayResend(sent(with: first), answered: expired))
        #expect(authorization.headerValue() == second)
        // The request sent again keeps its attempts and is not sent a third time, even when re-signing is allowed.
        let resent = exchange.resend()
        #expect(resent.attempts == 1)
        resent.authorization = second
        clock.advance(by: 20 * 60)
        #expect(!authorization.mayResend(resent, answered: expired))
        #expect(authorization.headerValue() == second)
        // Other refusals are not sent again.
        #expect(!authorization.mayResend(sent(with: second), answered: answer("InvalidProviderToken")))
    }

    @Test func credentialsNeverPrintTheKey() throws {
        let credentials = APNsCredentials(teamID: "TEAM123456", keyID: "KEY1234567", privateKey: self.key)
        #expect(!"\(credentials)".contains(self.key.pemRepresentation))
        #expect("\(credentials)".contains("<redacted>"))
        #expect(throws: APNsCredentials.KeyError.self) { try APNsCredentials(teamID: "T", keyID: "K", p8: "not a key") }
    }
}
