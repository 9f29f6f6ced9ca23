import Crypto
import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Apps and their signing keys: sealed at rest with the master key, never stored in the clear.
@Suite struct AppsTests {
    private let pem = P256.Signing.PrivateKey().pemRepresentation

    @Test func sealedKeysRoundTripAndNeverSitInTheClear() async throws {
        try await StoreFixture.with("apps_sealed") { fixture in
            let masterKey = MasterKey.random()
            let apps = Apps(client: fixture.client, masterKey: masterKey, logger: fixture.logger)
            let app = try await apps.add(
                bundleID: "com.example.delivery",
                environment: .production,
                teamID: "TEAM000001",
                keyID: "KEY0000001",
                signingKey: .sealed(p8: self.pem)
            )
            let credentials = try await apps.credentials(appID: app.id)
            #expect(credentials.teamID == "TEAM000001")
            #expect(credentials.keyID == "KEY0000001")
            let stored = try await fixture.client.query("SELECT signing_key_sealed FROM apps WHERE id = \(app.id)")
            for try await sealed in stored.decode(ByteBuffer.self) {
                #expect(!String(decoding: sealed.readableBytesView, as: UTF8.self).contains("PRIVATE KEY"))
                #expect(sealed.readableBytes > 100)
            }
            // Another master key cannot open it.
            await #expect(throws: StoreError.self) {
                try await Apps(client: fixture.client, masterKey: MasterKey.random(), logger: fixture.logger).credentials(appID: app.id)
            }
            #expect(try await apps.list().map(\.bundleID).contains("com.example.delivery"))
        }
    }

    @Test func keysByPathAreCheckedWhenAdded() async throws {
        try await StoreFixture.with("apps_path") { fixture in
            let key = try await ProviderKey.make(teamID: "TEAM000002", keyID: "KEY0000002")
            let apps = Apps(client: fixture.client, masterKey: nil, logger: fixture.logger)
            let app = try await apps.add(
                bundleID: "com.example.path",
                environment: .sandbox,
                teamID: key.teamID,
                keyID: key.keyID,
                signingKey: .path(key.path)
            )
            #expect(try await apps.credentials(appID: app.id).keyID == "KEY0000002")
            await #expect(throws: StoreError.self) {
                try await apps.add(
                    bundleID: "com.example.nokey",
                    environment: .sandbox,
                    teamID: key.teamID,
                    keyID: key.keyID,
                    signingKey: .path("/no/such.p8")
                )
            }
        }
    }

    @Test func badInputAndDuplicatesAreRefusedWithoutWriting() async throws {
        try await StoreFixture.with("apps_refused") { fixture in
            let apps = Apps(client: fixture.client, masterKey: MasterKey.random(), logger: fixture.logger)
            let before = try await apps.list().count
            let cases: [(String, String, String, Apps.SigningKey, String)] = [
                ("com.example.a", "team", "KEY0000001", .sealed(p8: self.pem), "teamId"),
                ("com.example.a", "TEAM000001", "KEY", .sealed(p8: self.pem), "keyId"),
                ("com.example.a.push-type.liveactivity", "TEAM000001", "KEY0000001", .sealed(p8: self.pem), "bundleId"),
                ("com.example.a", "TEAM000001", "KEY0000001", .sealed(p8: "not a key"), "key"),
                // The fixture's own app: same bundle id and environment.
                ("com.example.game", "TEAM000001", "KEY0000001", .sealed(p8: self.pem), "bundleId"),
            ]
            for (bundleID, teamID, keyID, key, field) in cases {
                do {
                    _ = try await apps.add(bundleID: bundleID, environment: .sandbox, teamID: teamID, keyID: keyID, signingKey: key)
                    Issue.record("accepted \(bundleID) \(teamID) \(keyID)")
                } catch let error as StoreError {
                    #expect(error.field == field)
                }
            }
            #expect(try await apps.list().count == before)
            await #expect(throws: StoreError.self) {
                try await Apps(client: fixture.client, masterKey: nil, logger: fixture.logger)
                    .add(
                        bundleID: "com.example.b",
                        environment: .sandbox,
                        teamID: "TEAM000001",
                        keyID: "KEY0000001",
                        signingKey: .sealed(p8: self.pem)
                    )
            }
            #expect(throws: StoreError.self) { try MasterKey(base64: "c2hvcnQ=") }
            #expect("\(MasterKey.random())" == "MasterKey(<redacted>)")
        }
    }
}
