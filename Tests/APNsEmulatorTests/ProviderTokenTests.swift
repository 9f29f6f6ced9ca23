import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// Provider-token checks in APNs' order, with tokens from the openssl recipe.
@Suite struct ProviderTokenTests {
    private func allChannels(_ fixture: EmulatorFixture, token: String) -> Curl.Request {
        .init("GET", "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/all-channels", headers: [("authorization", "bearer \(token)")])
    }

    @Test func validTokenAuthenticates() async throws {
        try await EmulatorFixture.with { fixture in
            let response = try await fixture.curl.send(self.allChannels(fixture, token: fixture.token))
            #expect(response.status == 200)
            #expect(response.json?["channels"] == .array([]))
        }
    }

    @Test func malformedTokensAreInvalid() async throws {
        try await EmulatorFixture.with { fixture in
            let now = Int(Date().timeIntervalSince1970)
            let other = try await ProviderKey.make()
            let tokens = [
                // iat as a quoted number
                try await fixture.key.token(claims: #"{"iss":"TEAM123456","iat":"\#(now)"}"#),
                // no iss
                try await fixture.key.token(claims: #"{"iat":\#(now)}"#),
                // no iat
                try await fixture.key.token(claims: #"{"iss":"TEAM123456"}"#),
                // alg other than ES256
                try await fixture.key.token(claims: #"{"iss":"TEAM123456","iat":\#(now)}"#, algorithm: "HS256"),
                // signed by a key the emulator does not trust, under the trusted ids
                try await other.token(),
                // an unknown team
                try await fixture.key.token(claims: #"{"iss":"OTHERTEAM1","iat":\#(now)}"#),
            ]
            for token in tokens {
                let response = try await fixture.curl.send(self.allChannels(fixture, token: token))
                #expect(response.status == 403, "\(token)")
                #expect(response.reason == "InvalidProviderToken", "\(token)")
            }
        }
    }

    @Test func tokenOlderThanAnHourIsExpired() async throws {
        try await EmulatorFixture.with { fixture in
            let old = try await fixture.key.token(issuedAt: Int(Date().timeIntervalSince1970) - 3700)
            let response = try await fixture.curl.send(self.allChannels(fixture, token: old))
            #expect(response.status == 403)
            #expect(response.reason == "ExpiredProviderToken")
        }
    }

    @Test func changingTheTokenOnAConnectionWithin20MinutesIsRefused() async throws {
        try await EmulatorFixture.with { fixture in
            let second = try await fixture.key.token(issuedAt: Int(Date().timeIntervalSince1970) - 5)
            let responses = try await fixture.curl.send([
                self.allChannels(fixture, token: fixture.token),
                self.allChannels(fixture, token: second),
                self.allChannels(fixture, token: fixture.token),
            ])
            #expect(responses.map(\.newConnections) == [1, 0, 0])
            #expect(responses.map(\.status) == [200, 429, 200])
            #expect(responses[1].reason == "TooManyProviderTokenUpdates")
            // A new connection may use the new token at once.
            #expect(try await fixture.curl.send(self.allChannels(fixture, token: second)).status == 200)
        }
    }

    @Test func aConnectionStaysBoundToItsFirstKey() async throws {
        let other = try await ProviderKey.make(teamID: "TEAM123456", keyID: "KEY7654321")
        try await EmulatorFixture.with({ $0.trustedKeys.append(try! other.trusted()) }) { fixture in
            let responses = try await fixture.curl.send([
                self.allChannels(fixture, token: fixture.token),
                self.allChannels(fixture, token: try await other.token()),
            ])
            #expect(responses.map(\.status) == [200, 403])
            #expect(responses[1].reason == "UnrelatedKeyIdInToken")
        }
    }

    @Test func aPublicKeyPEMIsTrustedLikeItsP8() async throws {
        let key = try await ProviderKey.make(teamID: "TEAMPUBLIC", keyID: "KEYPUBLIC1")
        let directory = try TemporaryDirectory()
        let publicPEM = directory.path("public.pem")
        let exported = try await ExternalProcess.run("openssl", ["pkey", "-in", key.path, "-pubout", "-out", publicPEM])
        #expect(exported.status == 0)
        let trusted = try TrustedKey(specification: "TEAMPUBLIC:KEYPUBLIC1:\(publicPEM)")
        try await EmulatorFixture.with({ $0.trustedKeys = [trusted] }) { fixture in
            let response = try await fixture.curl.send(self.allChannels(fixture, token: try await key.token()))
            #expect(response.status == 200)
        }
        #expect(throws: TrustedKey.LoadError.self) { try TrustedKey(specification: "TEAM:KEY:\(directory.path("missing.pem"))") }
    }
}
