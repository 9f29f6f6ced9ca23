import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The dispatcher between the outbox and the emulator's devices: what the phones show is the test.
@Suite struct ActivityDispatcherTests {
    /// An emulator device whose activity was started by push, registered in the store with its update token.
    private func startedActivity(_ emulator: EmulatorFixture, _ store: StoreFixture, apns: APNsClient, key: String) async throws -> (deviceID: String, token: String) {
        let device = try emulator.emulator.addDevice(bundleID: EmulatorFixture.bundleID, osVersion: "18.2", pushToStartTokens: ["GameAttributes": ""])
        let start = LiveActivityPayload.start(
            timestamp: Int(Date().timeIntervalSince1970) - 60,
            attributesType: "GameAttributes",
            attributes: try RawJSON(validating: #"{"team":"Giants"}"#),
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: LiveActivityAlert(title: "Kick-off")
        )
        let outcome = await apns.send(DevicePush(deviceToken: device.pushToStartTokens["GameAttributes"]!, bundleID: EmulatorFixture.bundleID, payload: try start.validated(for: .device)))
        #expect(outcome.isSuccess)
        let token = try #require(emulator.emulator.device(id: device.id)?.activities.first?.updateToken)
        _ = try await Activities(client: store.client, logger: store.logger).register(
            .init(appID: store.appID, activityKey: key, attributesType: "GameAttributes", pushToken: token, deviceID: device.id)
        )
        return (device.id, token)
    }

    private func withDispatcher(_ name: String, _ body: (EmulatorFixture, StoreFixture, APNsClient, ActivityDispatcher) async throws -> Void) async throws {
        try await EmulatorFixture.with { emulator in
            let apns = try emulator.makeClient()
            do {
                try await StoreFixture.with(name) { store in
                    let dispatcher = ActivityDispatcher(database: store.client, clientForApp: { _ in (apns, EmulatorFixture.bundleID) }, batchSize: 5, logger: store.logger)
                    try await body(emulator, store, apns, dispatcher)
                }
            } catch {
                await apns.shutdown()
                throw error
            }
            await apns.shutdown()
        }
    }

    private func update(_ store: StoreFixture, key: String, home: Int) async throws -> ActivityUpdates.Accepted {
        try await ActivityUpdates(client: store.client, logger: store.logger).accept(
            .init(appID: store.appID, activityKey: key, event: .update, contentState: try RawJSON(validating: #"{"home":\#(home)}"#)),
            now: Int(Date().timeIntervalSince1970)
        )
    }

    private func status(_ store: StoreFixture, _ updateID: Int64) async throws -> String? {
        let rows = try await store.client.query("SELECT status FROM updates WHERE id = \(updateID)")
        for try await status in rows.decode(String.self) { return status }
        return nil
    }

    @Test func anAcceptedUpdateReachesTheDevice() async throws {
        try await self.withDispatcher("dispatch_one") { emulator, store, apns, dispatcher in
            let (deviceID, _) = try await self.startedActivity(emulator, store, apns: apns, key: "a1")
            let accepted = try await self.update(store, key: "a1", home: 3)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await dispatcher.dispatchOnce() == 0)
            #expect(try await self.status(store, accepted.updateID) == "sent")
            let shown = emulator.emulator.device(id: deviceID)?.activities.first
            #expect(shown?.contentState == .object(["home": .int(3)]))
            #expect(shown?.lastTimestamp == accepted.timestamp)
        }
    }

    @Test func unregisteredTokensAreInvalidatedAndTheFailureKept() async throws {
        try await self.withDispatcher("dispatch_410") { emulator, store, apns, dispatcher in
            let (_, token) = try await self.startedActivity(emulator, store, apns: apns, key: "a1")
            var faults = emulator.emulator.faults
            faults.unregisteredTokens[token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000
            emulator.emulator.setFaults(faults)
            let accepted = try await self.update(store, key: "a1", home: 4)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await self.status(store, accepted.updateID) == "failed")
            #expect(try await Activities(client: store.client, logger: store.logger).liveToken(appID: store.appID, activityKey: "a1") == nil)
            let reasons = try await store.client.query("SELECT reason FROM deliveries WHERE update_id = \(accepted.updateID)")
            for try await reason in reasons.decode(String?.self) { #expect(reason == "Unregistered") }
        }
    }

    @Test func throttlingIsRetriedLater() async throws {
        try await self.withDispatcher("dispatch_retry") { emulator, store, apns, dispatcher in
            _ = try await self.startedActivity(emulator, store, apns: apns, key: "a1")
            emulator.emulator.setFaults(FaultPlan(script: [.status(429, reason: "TooManyRequests")]))
            let accepted = try await self.update(store, key: "a1", home: 5)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await self.status(store, accepted.updateID) == "pending")
            // Not due yet: the backoff holds it.
            #expect(try await dispatcher.dispatchOnce() == 0)
            try await store.client.query("UPDATE updates SET not_before = now() WHERE id = \(accepted.updateID)")
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await self.status(store, accepted.updateID) == "sent")
        }
    }

    @Test func twoDispatchersSendEachUpdateOnce() async throws {
        try await self.withDispatcher("dispatch_two") { emulator, store, apns, dispatcher in
            var devices: [String] = []
            for index in 0..<12 {
                devices.append(try await self.startedActivity(emulator, store, apns: apns, key: "a\(index)").deviceID)
                _ = try await self.update(store, key: "a\(index)", home: index)
            }
            let handled = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        var total = 0
                        while true {
                            let count = try await dispatcher.dispatchOnce()
                            if count == 0 { return total }
                            total += count
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(handled == 12)
            for (index, deviceID) in devices.enumerated() {
                let activity = emulator.emulator.device(id: deviceID)?.activities.first
                #expect(activity?.contentState == .object(["home": .int(index)]))
                #expect(activity?.appliedPushes == 1)
                #expect(activity?.ignoredPushes.isEmpty == true)
            }
        }
    }
}
