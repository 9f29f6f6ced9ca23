import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The emulator, a migrated database with one app, and an APNs client to the emulator: what a dispatcher test needs.
struct DispatchFixture {
    let emulator: EmulatorFixture
    let store: StoreFixture
    let apns: APNsClient

    /// Runs `body` with a fresh fixture, then judges every push the emulator received, as it arrived: no target
    /// got a timestamp older than one it had accepted (an identical re-send aside), nothing reached a token after
    /// its 410 or a target after its end. A test that sends older pushes on purpose passes `judgesWire: false`.
    /// - Parameters:
    ///   - latency: How long the emulator waits before each answer, as APNs does.
    ///   - configure: Changes the emulator's configuration further (its devices' budgets, their activities' lifetime).
    static func with(
        _ name: String,
        judgesWire: Bool = true,
        latency: EmulatorLatency = .none,
        emulator configure: (inout APNsEmulator.Configuration) -> Void = { _ in },
        _ body: (DispatchFixture) async throws -> Void
    ) async throws {
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.latency = latency
            configure(&$0)
        }) { emulator in
            let apns = try emulator.makeClient()
            do {
                try await StoreFixture.with(name) { store in
                    try await body(DispatchFixture(emulator: emulator, store: store, apns: apns))
                }
            } catch {
                await apns.shutdown()
                throw error
            }
            await apns.shutdown()
            if judgesWire {
                let verdict = WireJudge.judge(emulator.emulator.wireRecords)
                #expect(verdict.isClean, "at the wire: \(verdict)")
            }
        }
    }

    /// What the fixture's dispatchers are given when a test gives nothing else.
    static let settings = Dispatcher.Settings(batchSize: 5, pageSize: 100)

    /// A new dispatcher (each has its own name in claims) sending through the fixture's client.
    func dispatcher(_ settings: Dispatcher.Settings = Self.settings) -> Dispatcher {
        let apns = self.apns
        return Dispatcher(
            database: self.store.client,
            appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
            settings: settings,
            logger: self.store.logger
        )
    }

    var now: Int { Int(Date().timeIntervalSince1970) }

    /// An update's outbox status.
    func status(_ updateID: Int64) async throws -> String? {
        let rows = try await self.store.client.query("SELECT status FROM updates WHERE id = \(updateID)")
        for try await status in rows.decode(String.self) { return status }
        return nil
    }

    /// An update's sent and failed counts.
    func counts(_ updateID: Int64) async throws -> (sent: Int, failed: Int) {
        let rows = try await self.store.client.query("SELECT sent_count::int, failed_count::int FROM updates WHERE id = \(updateID)")
        for try await row in rows.decode((Int, Int).self) { return row }
        return (0, 0)
    }

    /// An emulator device whose activity was started by a push, registered in the store with its update token
    /// (following `feed`, or standalone).
    func startedActivity(key: String, feed: String? = nil, osVersion: String = "17.5") async throws -> (deviceID: String, token: String) {
        let device = try self.emulator.emulator.addDevice(
            bundleID: EmulatorFixture.bundleID,
            osVersion: osVersion,
            pushToStartTokens: ["GameAttributes": ""]
        )
        let outcome = await self.apns.send(
            DevicePush(deviceToken: device.pushToStartTokens["GameAttributes"]!, bundleID: EmulatorFixture.bundleID, payload: try self.startPayload())
        )
        #expect(outcome.isSuccess)
        let token = try #require(self.emulator.emulator.device(id: device.id)?.activities.first?.updateToken)
        _ = try await Activities(client: self.store.client, logger: self.store.logger).register(
            .init(appID: self.store.appID, activityKey: key, attributesType: "GameAttributes", feedKey: feed, pushToken: token, deviceID: device.id)
        )
        return (device.id, token)
    }

    /// A push-to-start of `GameAttributes` a minute ago, `{"home":0}`, asking for an update token.
    private func startPayload() throws -> [UInt8] {
        var start = LiveActivityPayload.start(
            timestamp: self.now - 60,
            attributesType: "GameAttributes",
            attributes: try RawJSON(validating: #"{"team":"Giants"}"#),
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: LiveActivityAlert(title: "Kick-off")
        )
        start.inputPushToken = true
        return try start.validated(for: .device)
    }

    /// A feed of `GameAttributes`, with a channel at the emulator when asked.
    @discardableResult
    func feed(_ key: String, channelPolicy: Int? = nil, staleAfterSeconds: Int? = nil) async throws -> String? {
        let feeds = Feeds(client: self.store.client, logger: self.store.logger)
        _ = try await feeds.put(
            .init(
                appID: self.store.appID,
                feedKey: key,
                attributesType: "GameAttributes",
                attributes: try RawJSON(validating: #"{"team":"Giants"}"#),
                staleAfter: staleAfterSeconds.map { Duration.seconds($0) }
            )
        )
        guard let channelPolicy else { return nil }
        let registry = ChannelRegistry(
            channels: Channels(client: self.store.client, logger: self.store.logger),
            apns: self.apns,
            logger: self.store.logger
        )
        return try await registry.create(appID: self.store.appID, bundleID: EmulatorFixture.bundleID, storagePolicy: channelPolicy, feedKey: key)
            .channelID
    }

    /// Accepts a feed update with `{"home": home}`.
    func update(feed: String, home: Int, timestamp: Int? = nil) async throws -> AcceptedUpdate {
        try await FeedUpdates(client: self.store.client, logger: self.store.logger).accept(
            .init(
                appID: self.store.appID,
                feedKey: feed,
                event: .update,
                contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
                timestamp: timestamp
            )
        )
    }

    /// Accepts an update of a standalone activity with `{"home": home}`.
    func update(activity key: String, home: Int, timestamp: Int? = nil) async throws -> AcceptedUpdate {
        try await ActivityUpdates(client: self.store.client, logger: self.store.logger).accept(
            .init(
                appID: self.store.appID,
                activityKey: key,
                event: .update,
                contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
                timestamp: timestamp
            )
        )
    }

    /// An emulator device with a push-to-start token for `GameAttributes`, registered in the store as its app would.
    func registeredDevice(osVersion: String = "17.5") async throws -> DeviceSnapshot {
        let device = try self.emulator.emulator.addDevice(
            bundleID: EmulatorFixture.bundleID,
            osVersion: osVersion,
            pushToStartTokens: ["GameAttributes": ""]
        )
        _ = try await PushToStartTokens(client: self.store.client, logger: self.store.logger).register(
            .init(
                appID: self.store.appID,
                deviceID: device.id,
                attributesType: "GameAttributes",
                token: device.pushToStartTokens["GameAttributes"]!,
                osVersion: osVersion
            )
        )
        return device
    }

    /// The activities a device shows.
    func shown(_ deviceID: String) -> [ActivitySnapshot] {
        self.emulator.emulator.device(id: deviceID)?.activities ?? []
    }

    /// Started activities on emulator devices, stored as the feed's token-based followers in bulk.
    func tokenFollowers(_ count: Int, feed: String) async throws -> [(deviceID: String, token: String)] {
        var devices: [DeviceSnapshot] = []
        for _ in 0..<count {
            devices.append(
                try self.emulator.emulator.addDevice(bundleID: EmulatorFixture.bundleID, osVersion: "17.5", pushToStartTokens: ["GameAttributes": ""])
            )
        }
        let bytes = try self.startPayload()
        // In batches, so that no push waits behind thousands of others past its deadline on a busy machine.
        for batch in stride(from: 0, to: devices.count, by: 500) {
            let pushes = devices[batch..<min(batch + 500, devices.count)].map {
                DevicePush(deviceToken: $0.pushToStartTokens["GameAttributes"]!, bundleID: EmulatorFixture.bundleID, payload: bytes)
            }
            let outcomes = await self.apns.send(pushes)
            #expect(outcomes.allSatisfy { $0.isSuccess })
        }
        let started = try devices.map { device in
            (deviceID: device.id, token: try #require(self.shown(device.id).first?.updateToken))
        }
        try await self.store.client.query(
            """
            WITH followers AS (
                INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, device_id, os_version, state)
                SELECT \(self.store.appID), device_id, 'GameAttributes', (SELECT id FROM feeds WHERE feed_key = \(feed)), device_id, '17.5', 'active'
                FROM unnest(\(started.map(\.deviceID))::text[]) AS d(device_id)
                RETURNING id, activity_key
            )
            INSERT INTO activity_tokens (app_id, activity_id, token, generation)
            SELECT \(self.store.appID), f.id, t.token, 1
            FROM unnest(\(started.map(\.deviceID))::text[], \(started.map(\.token))::text[]) AS t(device_id, token)
            JOIN followers f ON f.activity_key = t.device_id
            """
        )
        return started
    }

    /// How many pushes an update still owes.
    func owed(update updateID: Int64) async throws -> Int {
        let rows = try await self.store.client.query("SELECT count(*)::int FROM owed_pushes WHERE update_id = \(updateID)")
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// How far a fan-out has checkpointed: the last follower or audience row it finished.
    func cursor(_ updateID: Int64) async throws -> Int64 {
        let rows = try await self.store.client.query("SELECT cursor_id FROM updates WHERE id = \(updateID)")
        for try await cursor in rows.decode(Int64.self) { return cursor }
        return 0
    }
}
