import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// One app's broken signing key delays no other app: its work is held back, reported, and finally given up as
/// dead letters; an app's changed key gets a new APNs client.
@Suite struct AppIsolationTests {
    @Test func anAppWhoseKeyCannotBeOpenedIsHeldBackAndTheOthersGoOn() async throws {
        try await DispatchFixture.with("isolation_broken_key") { fixture in
            let key = try await ProviderKey.make()
            let brokenApp = try await self.app(fixture, bundleID: "com.example.broken", keyPath: key.path)
            let brokenActivity = try await self.activity(fixture, appID: brokenApp)
            try FileManager.default.removeItem(atPath: key.path)  // the key file went away
            let appClients = AppClients(
                apps: Apps(client: fixture.store.client, masterKey: nil, logger: fixture.store.logger),
                logger: fixture.store.logger
            )
            let apns = fixture.apns
            let goodApp = fixture.store.appID
            let clients = FixedAppClients(apns, bundleID: EmulatorFixture.bundleID, apps: [goodApp], otherwise: appClients)
            let dispatcher = Dispatcher(database: fixture.store.client, appClients: clients, logger: fixture.store.logger)

            let (deviceID, _) = try await fixture.startedActivity(key: "a1")
            let updates = ActivityUpdates(client: fixture.store.client, logger: fixture.store.logger)
            let good = try await updates.accept(
                .init(appID: goodApp, activityKey: "a1", event: .update, contentState: try RawJSON(validating: #"{"home":1}"#))
            )
            let broken = try await updates.accept(
                .init(appID: brokenApp, activityKey: brokenActivity, event: .update, contentState: try RawJSON(validating: #"{"home":1}"#))
            )
            #expect(try await dispatcher.dispatchOnce() == 2)
            #expect(try await fixture.status(good.updateID) == "sent")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(1)]))
            #expect(try await fixture.status(broken.updateID) == "pending")
            #expect(try await self.secondsUntilDue(fixture, broken.updateID) > 50, "the broken app's update is not held back a minute")
            #expect(await appClients.unusableKeyCount == 1)

            // Past the retry deadline it is given up with the reason.
            try await fixture.ageUpdate(broken.updateID, bySeconds: 1.2)
            let hasty = Dispatcher(
                database: fixture.store.client,
                appClients: clients,
                settings: .init(retryDeadline: .seconds(1)),
                logger: fixture.store.logger
            )
            #expect(try await hasty.dispatchOnce() == 1)
            #expect(try await fixture.status(broken.updateID) == "failed")
            let letters = try await fixture.store.client.query("SELECT reason FROM dead_letters WHERE update_id = \(broken.updateID)")
            var reasons: [String] = []
            for try await reason in letters.decode(String.self) { reasons.append(reason) }
            #expect(reasons == [AppClients.unusableKeyReason])
            await appClients.shutdown()
        }
    }

    @Test func anAppsChangedKeyGetsANewClient() async throws {
        try await DispatchFixture.with("isolation_key_change") { fixture in
            let first = try await ProviderKey.make()
            let appID = try await self.app(fixture, bundleID: "com.example.rotating", keyPath: first.path)
            let appClients = AppClients(
                apps: Apps(client: fixture.store.client, masterKey: nil, logger: fixture.store.logger),
                keyRecheckInterval: .zero,
                logger: fixture.store.logger
            )
            let before = try await appClients.client(forApp: appID).client
            #expect(try await appClients.client(forApp: appID).client === before, "an unchanged key got a new client")
            let second = try await ProviderKey.make()
            try FileManager.default.removeItem(atPath: first.path)
            try FileManager.default.copyItem(atPath: second.path, toPath: first.path)
            let after = try await appClients.client(forApp: appID).client
            #expect(after !== before, "the client still signs with the old key")
            try FileManager.default.removeItem(atPath: first.path)
            await #expect(throws: StoreError.self) { try await appClients.client(forApp: appID) }
            #expect(await appClients.unusableKeyCount == 1)
            await appClients.shutdown()
        }
    }

    /// Adds an app whose key is read from `keyPath`.
    private func app(_ fixture: DispatchFixture, bundleID: String, keyPath: String) async throws -> Int64 {
        let rows = try await fixture.store.client.query(
            """
            INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
            VALUES (\(bundleID), 'sandbox', 'TEAM123456', 'KEY7654321', \(keyPath)) RETURNING id
            """
        )
        for try await id in rows.decode(Int64.self) { return id }
        throw TestFailure("no app")
    }

    /// A standalone activity of the app with an update token. - Returns: its activity key.
    private func activity(_ fixture: DispatchFixture, appID: Int64) async throws -> String {
        _ = try await Activities(client: fixture.store.client, logger: fixture.store.logger).register(
            .init(appID: appID, activityKey: "b1", attributesType: "GameAttributes", pushToken: String(repeating: "ab", count: 32))
        )
        return "b1"
    }

    private func secondsUntilDue(_ fixture: DispatchFixture, _ updateID: Int64) async throws -> Double {
        let rows = try await fixture.store.client.query("SELECT extract(epoch FROM not_before - now())::float8 FROM updates WHERE id = \(updateID)")
        for try await seconds in rows.decode(Double.self) { return seconds }
        return 0
    }
}
