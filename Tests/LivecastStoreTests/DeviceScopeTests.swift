import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A device's own registrations, as a client key makes them: activities held to the device and its cap, dismissals
/// and the unregistration of a whole device.
@Suite struct DeviceScopeTests {
    private func registration(_ fixture: StoreFixture, key: String, device: String?, token: String? = nil) -> Activities.Registration {
        .init(appID: fixture.appID, activityKey: key, attributesType: "GameAttributes", pushToken: token, deviceID: device)
    }

    private func states(_ fixture: StoreFixture) async throws -> [String: String] {
        let rows = try await fixture.client.query("SELECT activity_key, state FROM activities WHERE app_id = \(fixture.appID)")
        var states: [String: String] = [:]
        for try await (key, state) in rows.decode((String, String).self) { states[key] = state }
        return states
    }

    @Test func aDeviceRegistersItsOwnActivitiesUpToItsCap() async throws {
        try await StoreFixture.with("device_scope_activities") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            let phone = Activities.DeviceScope(deviceID: "phone-1", activityLimit: 2)
            #expect(try await activities.register(self.registration(fixture, key: "a", device: "phone-1"), device: phone) == .created)
            #expect(try await activities.register(self.registration(fixture, key: "b", device: "phone-1"), device: phone) == .created)
            do {
                _ = try await activities.register(self.registration(fixture, key: "c", device: "phone-1"), device: phone)
                Issue.record("a third running activity was registered")
            } catch let error as StoreError {
                #expect(error.code == .deviceLimitReached)
            }
            // Another device's activity, or one with none, is not found for this device.
            _ = try await activities.register(self.registration(fixture, key: "other", device: "phone-2"))
            _ = try await activities.register(self.registration(fixture, key: "none", device: nil))
            for key in ["other", "none"] {
                do {
                    _ = try await activities.register(self.registration(fixture, key: key, device: "phone-1", token: "aa"), device: phone)
                    Issue.record("\(key) was registered by phone-1")
                } catch let error as StoreError {
                    #expect(error.code == .notFound, "\(key)")
                }
                #expect(try await !activities.endedByDevice(appID: fixture.appID, activityKey: key, deviceID: "phone-1"))
                #expect(try await !activities.dismissedByDevice(appID: fixture.appID, activityKey: key, deviceID: "phone-1"))
            }
            #expect(try await self.states(fixture) == ["a": "starting", "b": "starting", "other": "starting", "none": "starting"])
        }
    }

    @Test func aDismissalForgetsTheTokenAndIsIdempotent() async throws {
        try await StoreFixture.with("device_scope_dismissal") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            _ = try await activities.register(self.registration(fixture, key: "a", device: "phone-1", token: "a1"))
            for _ in 0..<2 {
                #expect(try await activities.dismissedByDevice(appID: fixture.appID, activityKey: "a", deviceID: "phone-1"))
            }
            #expect(try await self.states(fixture) == ["a": "dismissed"])
            let rows = try await fixture.client.query(
                "SELECT invalidation_reason, (SELECT ended_at IS NOT NULL AND dismissed_at IS NOT NULL FROM activities) FROM activity_tokens"
            )
            for try await (reason, stamped) in rows.decode((String?, Bool).self) {
                #expect(reason == "dismissed")
                #expect(stamped)
            }
        }
    }

    @Test func unregisteringADeviceTouchesThatDeviceOnly() async throws {
        try await StoreFixture.with("device_scope_unregister") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            for (device, type, token) in [
                ("phone-1", "GameAttributes", "a1"), ("phone-1", "OrderAttributes", "a2"), ("phone-2", "GameAttributes", "b1"),
            ] {
                _ = try await tokens.register(.init(appID: fixture.appID, deviceID: device, attributesType: type, token: token))
            }
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            _ = try await activities.register(self.registration(fixture, key: "a", device: "phone-1"))
            _ = try await activities.register(self.registration(fixture, key: "b", device: "phone-2"))
            let devices = Devices(client: fixture.client, logger: fixture.logger)
            let first = try await devices.unregister(appID: fixture.appID, deviceID: "phone-1")
            #expect(first.invalidatedTokens == 2 && first.endedActivities == 1)
            let again = try await devices.unregister(appID: fixture.appID, deviceID: "phone-1")
            #expect(again.invalidatedTokens == 0 && again.endedActivities == 0)
            #expect(try await fixture.rows(device: "phone-1").map(\.reason) == ["deleted"])
            #expect(try await fixture.rows(device: "phone-2").map(\.live) == [true])
            #expect(try await self.states(fixture) == ["a": "ended", "b": "starting"])
        }
    }
}
