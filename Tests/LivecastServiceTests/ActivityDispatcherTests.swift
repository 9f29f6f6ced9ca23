import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Metrics
import PostgresNIO
import Prometheus
import Testing

/// The dispatcher between the outbox and the emulator's devices: what the phones show is the test.
@Suite struct ActivityDispatcherTests {
    @Test func anAcceptedUpdateReachesTheDevice() async throws {
        try await DispatchFixture.with("dispatch_one") { fixture in
            let dispatcher = fixture.dispatcher()
            let (deviceID, _) = try await fixture.startedActivity(key: "a1")
            let accepted = try await fixture.update(activity: "a1", home: 3)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await dispatcher.dispatchOnce() == 0)
            #expect(try await fixture.status(accepted.updateID) == "sent")
            let shown = fixture.emulator.emulator.device(id: deviceID)?.activities.first
            #expect(shown?.contentState == .object(["home": .int(3)]))
            #expect(shown?.lastTimestamp == accepted.timestamp)
        }
    }

    @Test func aChannelAPNsNoLongerHasIsMarkedMissingAndItsFailureKeptAsAChannels() async throws {
        try await DispatchFixture.with("dispatch_channel_gone") { fixture in
            let dispatcher = fixture.dispatcher()
            // A channel in the registry that the emulator never made (deleted at APNs behind Livecast's back).
            let gone = "Z29uZS1jaGFubmVsLWlkLTE="
            try await fixture.store.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy) VALUES (\(fixture.store.appID), \(gone), 0)"
            )
            _ = try await Activities(client: fixture.store.client, logger: fixture.store.logger).register(
                .init(appID: fixture.store.appID, activityKey: "a1", attributesType: "GameAttributes", channelID: gone)
            )
            let accepted = try await fixture.update(activity: "a1", home: 1)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(accepted.updateID) == "failed")
            let deliveries = try await fixture.store.client.query(
                "SELECT target_kind, target, reason FROM deliveries WHERE update_id = \(accepted.updateID)"
            )
            var rows: [(String, String, String?)] = []
            for try await row in deliveries.decode((String, String, String?).self) { rows.append(row) }
            #expect(rows.count == 1)
            #expect(rows.first?.0 == "channel" && rows.first?.1 == gone)
            #expect(["ChannelNotRegistered", "BadChannelId"].contains(rows.first?.2 ?? ""), "\(rows)")
            let state = try await fixture.store.client.query("SELECT state FROM channels WHERE channel_id = \(gone)")
            for try await state in state.decode(String.self) { #expect(state == "missing") }
        }
    }

    @Test func unregisteredTokensAreInvalidatedAndTheFailureKept() async throws {
        try await DispatchFixture.with("dispatch_410") { fixture in
            let dispatcher = fixture.dispatcher()
            let (_, token) = try await fixture.startedActivity(key: "a1")
            var faults = fixture.emulator.emulator.faults
            faults.unregisteredTokens[token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000
            fixture.emulator.emulator.setFaults(faults)
            let accepted = try await fixture.update(activity: "a1", home: 4)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(accepted.updateID) == "failed")
            let live = try await fixture.store.client.query(
                "SELECT count(*)::int FROM activity_tokens WHERE token = \(token) AND invalidated_at IS NULL"
            )
            for try await count in live.decode(Int.self) { #expect(count == 0, "an invalidated token is not live") }
            let reasons = try await fixture.store.client.query("SELECT reason FROM deliveries WHERE update_id = \(accepted.updateID)")
            for try await reason in reasons.decode(String?.self) { #expect(reason == "Unregistered") }
        }
    }

    @Test func outcomesAreCountedByTargetClassificationAndReason() async throws {
        try await DispatchFixture.with("dispatch_metrics") { fixture in
            let registry = PrometheusCollectorRegistry()
            try await withMetricsFactory(PrometheusMetricsFactory(registry: registry)) {
                let dispatcher = fixture.dispatcher()
                _ = try await fixture.startedActivity(key: "a1")
                _ = try await fixture.startedActivity(key: "a3")
                let (_, gone) = try await fixture.startedActivity(key: "a2")
                var faults = fixture.emulator.emulator.faults
                faults.unregisteredTokens[gone] = Int(Date().timeIntervalSince1970 * 1000) + 60_000
                fixture.emulator.emulator.setFaults(faults)
                _ = try await fixture.update(activity: "a1", home: 1)
                _ = try await fixture.update(activity: "a2", home: 1)
                _ = try await fixture.update(activity: "a3", home: 1)
                _ = try await dispatcher.drain()
            }
            let exported = registry.emitToString()
            #expect(exported.contains(#"livecast_pushes_total{target="device",outcome="delivered",reason=""} 2"#), "\(exported)")
            #expect(exported.contains(#"livecast_pushes_total{target="device",outcome="tokenInvalid",reason="Unregistered"} 1"#))
            #expect(exported.contains(#"livecast_tokens_invalidated_total{kind="update"} 1"#))
            #expect(exported.contains("livecast_apns_request_duration_seconds_count 3"))
        }
    }

    @Test func throttlingIsRetriedLater() async throws {
        try await DispatchFixture.with("dispatch_retry") { fixture in
            let dispatcher = fixture.dispatcher(
                Dispatcher.Settings(batchSize: 5, pageSize: 100, firstRetryBackoff: .seconds(2), maximumRetryBackoff: .seconds(2))
            )
            _ = try await fixture.startedActivity(key: "a1")
            fixture.emulator.emulator.setFaults(FaultPlan(script: [.status(429, reason: "TooManyRequests")]))
            let accepted = try await fixture.update(activity: "a1", home: 5)
            let beforeTheAttempt = Date().timeIntervalSince1970
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(accepted.updateID) == "pending")
            // Not due before the backoff: at least 2 s less 20 % jitter after the attempt (a clock the test does
            // not race: a second dispatch on a busy machine could come after the backoff).
            let due = try await fixture.store.client.query(
                "SELECT extract(epoch FROM not_before)::float8 FROM updates WHERE id = \(accepted.updateID)"
            )
            for try await notBefore in due.decode(Double.self) { #expect(notBefore >= beforeTheAttempt + 1.6) }
            try await fixture.store.client.query("UPDATE updates SET not_before = now() WHERE id = \(accepted.updateID)")
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(accepted.updateID) == "sent")
        }
    }

    @Test func anActivitysNewerUpdateIsClaimedOnlyOnceItsOlderOneIsSent() async throws {
        try await DispatchFixture.with("dispatch_in_order") { fixture in
            let dispatcher = fixture.dispatcher()
            let (deviceID, _) = try await fixture.startedActivity(key: "a1")
            _ = try await fixture.startedActivity(key: "a2")
            let now = Int(Date().timeIntervalSince1970)
            let older = try await fixture.update(activity: "a1", home: 1, timestamp: now + 1)
            let newer = try await fixture.update(activity: "a1", home: 2, timestamp: now + 2)
            let other = try await fixture.update(activity: "a2", home: 7, timestamp: now + 1)
            #expect(try await dispatcher.dispatchOnce() == 2)
            #expect(try await fixture.status(older.updateID) == "sent")
            #expect(try await fixture.status(other.updateID) == "sent")
            #expect(try await fixture.status(newer.updateID) == "pending")
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(newer.updateID) == "sent")
            let shown = fixture.emulator.emulator.device(id: deviceID)?.activities.first
            #expect(shown?.contentState == .object(["home": .int(2)]))
            #expect(shown?.appliedPushes == 2)
        }
    }

    @Test func theOldestDueUpdatesAreClaimedFirstABatchAtATime() async throws {
        try await DispatchFixture.with("dispatch_oldest_first") { fixture in
            let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 3, pageSize: 100))
            var accepted: [AcceptedUpdate] = []
            for index in 0..<5 {
                _ = try await fixture.startedActivity(key: "a\(index)")
                accepted.append(try await fixture.update(activity: "a\(index)", home: index))
            }
            #expect(try await dispatcher.dispatchOnce() == 3)
            for update in accepted.prefix(3) { #expect(try await fixture.status(update.updateID) == "sent") }
            for update in accepted.suffix(2) { #expect(try await fixture.status(update.updateID) == "pending") }
            #expect(try await dispatcher.dispatchOnce() == 2)
            for update in accepted { #expect(try await fixture.status(update.updateID) == "sent") }
        }
    }

    @Test func twoDispatchersSendEachUpdateOnce() async throws {
        try await DispatchFixture.with("dispatch_two") { fixture in
            let dispatcher = fixture.dispatcher()
            var devices: [String] = []
            for index in 0..<12 {
                devices.append(try await fixture.startedActivity(key: "a\(index)").deviceID)
                _ = try await fixture.update(activity: "a\(index)", home: index)
            }
            let handled = try await withThrowingTaskGroup(of: Int.self) { group in
                for dispatcher in [dispatcher, fixture.dispatcher()] {
                    group.addTask { try await dispatcher.drain() }
                }
                return try await group.reduce(0, +)
            }
            #expect(handled == 12)
            for (index, deviceID) in devices.enumerated() {
                let activity = fixture.emulator.emulator.device(id: deviceID)?.activities.first
                #expect(activity?.contentState == .object(["home": .int(index)]))
                #expect(activity?.appliedPushes == 1)
                #expect(activity?.ignoredPushes.isEmpty == true)
            }
        }
    }
}
