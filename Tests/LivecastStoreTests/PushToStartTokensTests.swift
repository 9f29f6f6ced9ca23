import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Push-to-start tokens against a real PostgreSQL: rotation without a gap, conflicts, APNs' verdicts.
@Suite struct PushToStartTokensTests {
    private func registration(_ fixture: StoreFixture, device: String = "device-1", token: String) -> PushToStartTokens.Registration {
        .init(appID: fixture.appID, deviceID: device, attributesType: "GameAttributes", token: token, userID: "user-1", osVersion: "18.2")
    }

    @Test func registerRefreshAndRotate() async throws {
        try await StoreFixture.with("ptst_rotate") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            #expect(try await tokens.register(self.registration(fixture, token: "AA01")) == .created)
            #expect(try await tokens.register(self.registration(fixture, token: "aa01")) == .unchanged)
            #expect(try await tokens.register(self.registration(fixture, token: "aa02")) == .rotated)
            let rows = try await fixture.rows(device: "device-1")
            #expect(rows.map(\.token) == ["aa01", "aa02"])
            #expect(rows.map(\.live) == [false, true])
            #expect(rows.first?.reason == "rotated")
            #expect(rows.filter(\.live).map(\.token) == ["aa02"], "the rotated token replaced the old one")
            // The old token coming back is a rotation to it, reviving its row.
            #expect(try await tokens.register(self.registration(fixture, token: "aa01")) == .rotated)
            #expect(try await fixture.rows(device: "device-1").filter(\.live).map(\.token) == ["aa01"])
        }
    }

    @Test func aTokenMovesToTheDeviceThatReportsItAndServesSeveralTypesOfOne() async throws {
        try await StoreFixture.with("ptst_move") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            let order = { (device: String) in
                PushToStartTokens.Registration(appID: fixture.appID, deviceID: device, attributesType: "OrderAttributes", token: "bb01")
            }
            // One device, two attributes types sharing one token.
            #expect(try await tokens.register(self.registration(fixture, token: "bb01")) == .created)
            #expect(try await tokens.register(order("device-1")) == .created)
            #expect(try await tokens.register(order("device-1")) == .unchanged)
            // The same token from a new device id (a reinstall): it moves, type by type.
            #expect(try await tokens.register(self.registration(fixture, device: "device-2", token: "bb01")) == .moved)
            #expect(try await fixture.rows(device: "device-2").map { "\($0.token) \($0.live)" } == ["bb01 true"])
            #expect(
                try await fixture.rows(device: "device-1", type: "OrderAttributes").map { "\($0.token) \($0.live) \($0.reason ?? "-")" } == [
                    "bb01 false moved"
                ]
            )
            #expect(try await tokens.register(order("device-2")) == .created, "its other type's row was invalidated when it moved")
            let live = try await fixture.client.query(
                "SELECT count(*)::int FROM push_to_start_tokens WHERE token = 'bb01' AND invalidated_at IS NULL AND device_id <> 'device-2'"
            )
            for try await count in live.decode(Int.self) { #expect(count == 0, "a token is live on one device only") }
            for bad in ["", "xyz", "abc"] {
                await #expect(throws: StoreError.self) { try await tokens.register(self.registration(fixture, token: bad)) }
            }
        }
    }

    @Test func aDevicesCapHoldsUnderParallelRegistrations() async throws {
        try await StoreFixture.with("ptst_cap_race") { fixture in
            try await fixture.client.query("INSERT INTO client_devices (app_id, device_id) VALUES (\(fixture.appID), 'phone-1')")
            let registrar = PushToStartRegistrar(client: fixture.client, logger: fixture.logger)
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for type in 0..<40 {
                    group.addTask {
                        let registration = PushToStartTokens.Registration(
                            appID: fixture.appID,
                            deviceID: "phone-1",
                            attributesType: "Type\(type)",
                            token: String(format: "%04x", type),
                            isByClientKey: true,
                            deviceTokenCap: 4
                        )
                        do {
                            return try await registrar.register(registration) == .created
                        } catch let error as StoreError {
                            #expect(error.code == .deviceLimitReached)
                            return false
                        } catch {
                            Issue.record(error)
                            return false
                        }
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 4)
            let live = try await fixture.client.query(
                "SELECT count(*)::int FROM push_to_start_tokens WHERE device_id = 'phone-1' AND invalidated_at IS NULL"
            )
            for try await count in live.decode(Int.self) { #expect(count == 4) }
        }
    }

    @Test func deleteStopsTheLiveToken() async throws {
        try await StoreFixture.with("ptst_delete") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.registration(fixture, token: "cc01"))
            #expect(try await tokens.delete(appID: fixture.appID, deviceID: "device-1", attributesType: "GameAttributes"))
            #expect(try await !tokens.delete(appID: fixture.appID, deviceID: "device-1", attributesType: "GameAttributes"))
            #expect(try await fixture.rows(device: "device-1").map(\.reason) == ["deleted"])
        }
    }

    @Test func unregisteredOnlyInvalidatesATokenRegisteredBeforeAPNsSaidSo() async throws {
        try await StoreFixture.with("ptst_invalidate") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.registration(fixture, token: "dd01"))
            let beforeRegistration = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
            #expect(try await !tokens.invalidate(appID: fixture.appID, token: "dd01", reason: .unregistered, invalidSinceMillis: beforeRegistration))
            #expect(try await fixture.rows(device: "device-1").first?.live == true)
            let afterRegistration = Int64(Date().timeIntervalSince1970 * 1000) + 1_000
            #expect(try await tokens.invalidate(appID: fixture.appID, token: "dd01", reason: .unregistered, invalidSinceMillis: afterRegistration))
            #expect(try await fixture.rows(device: "device-1").first?.reason == "Unregistered")

            _ = try await tokens.register(self.registration(fixture, device: "device-2", token: "dd02"))
            #expect(try await tokens.invalidate(appID: fixture.appID, token: "DD02", reason: .badDeviceToken))
            #expect(try await fixture.rows(device: "device-2").map(\.live) == [false])
        }
    }

    @Test func racingRotationsLeaveExactlyOneLiveToken() async throws {
        try await StoreFixture.with("ptst_race") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.registration(fixture, token: "ee00"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...20 {
                    group.addTask {
                        // A lost race may be refused as a conflict; it never leaves two live tokens or none.
                        _ = try? await tokens.register(self.registration(fixture, token: String(format: "ee%02x", index)))
                    }
                }
                try await group.waitForAll()
            }
            let rows = try await fixture.rows(device: "device-1")
            #expect(rows.filter(\.live).count == 1)
            #expect(rows.count >= 2)
        }
    }

    /// A registration of a stored device, on a table without statistics (a new database before autovacuum's first
    /// ANALYZE), analyzes it first (`sql/0027`): its look-ups by key went through the wrong index and read the app's
    /// every token. A registration of a new device, all a launch peak brings, does not.
    @Test func aStoredDevicesRegistrationAnalyzesATableThatOutgrewItsStatistics() async throws {
        try await StoreFixture.with("ptst_unanalyzed") { fixture in
            // The registration's own ANALYZE is what is tested: autovacuum's could come meanwhile.
            try await fixture.client.query("ALTER TABLE push_to_start_tokens SET (autovacuum_enabled = false)")
            try await fixture.client.query(
                """
                INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token)
                SELECT \(fixture.appID), 'stored-' || g, 'GameAttributes', lpad(to_hex(g), 8, '0') FROM generate_series(1, 3000) g
                """
            )
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            #expect(try await tokens.register(self.registration(fixture, device: "new", token: "ffff0001")) == .created)
            #expect(try await fixture.timesAnalyzed("push_to_start_tokens") == 0, "a new device's registration analyzes nothing")
            let stored = PushToStartTokens.Registration(
                appID: fixture.appID,
                deviceID: "stored-1",
                attributesType: "GameAttributes",
                token: "00000001"
            )
            #expect(try await tokens.register(stored) == .unchanged)
            #expect(try await fixture.timesAnalyzed("push_to_start_tokens") == 1, "a stored device's registration analyzes the table")
            #expect(try await tokens.register(stored) == .unchanged)
            #expect(try await fixture.timesAnalyzed("push_to_start_tokens") == 1, "once")
        }
    }
}
