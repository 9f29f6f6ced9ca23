import Foundation
import LivecastKit
import LivecastServer
import LivecastService
import LivecastTesting
import NIOPosix
import PostgresNIO
import Testing

/// LivecastKit's core against a real Livecast: what it sends lands in the store, nothing is lost or reordered
/// through an outage and a relaunch, throttling is waited out, an unchanged token goes once, and a revoked key is
/// given up on.
@Suite struct LivecastKitIntegrationTests {
    private static let patience: Duration = .seconds(60)

    @Test func tokensAndActivitiesLandInTheStore() async throws {
        try await KitServer.with("kit_registers") { server in
            let directory = try TemporaryDirectory()
            let client = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(client)
            await client.register(pushToStartToken: Data([0xAA, 0x01]), for: "GameAttributes", frequentUpdatesEnabled: true)
            let activity = LivecastActivity(id: "A1", attributesType: "GameAttributes")
            await client.register(activity: activity, updateToken: Data([0xBB, 0x01]))
            try await Self.idle(client)

            let rows = try await server.store.rows(device: try #require(client.deviceID))
            #expect(rows.map(\.token) == ["aa01"] && rows.allSatisfy(\.live))
            #expect(try await Self.liveToken(of: "A1", server) == "bb01")
            #expect(try await server.value("SELECT device_id FROM activities WHERE activity_key = 'A1'", as: String.self) == client.deviceID)
            try await events.waitFor(2, .delivered)
            #expect(events.events(.delivered).count == 2 && events.events(.dropped).isEmpty, "\(events.events)")

            await client.activityEnded("A1")
            try await Self.idle(client)
            #expect(try await server.value("SELECT state FROM activities WHERE activity_key = 'A1'", as: String.self) == "ended")
            await client.shutdown()
        }
    }

    @Test func nothingIsLostOrReorderedThroughAnOutageAndARelaunch() async throws {
        try await KitServer.with("kit_offline") { server in
            let directory = try TemporaryDirectory()
            let offline = try server.client(storeDirectory: directory.url, baseURL: URL(string: "http://127.0.0.1:\(try await Self.closedPort())")!)
            let offlineEvents = EventRecorder(offline)
            let activity = LivecastActivity(id: "A2", attributesType: "GameAttributes")
            await offline.register(pushToStartToken: Data([0x01]), for: "GameAttributes")
            await offline.register(pushToStartToken: Data([0x02]), for: "GameAttributes")
            await offline.register(activity: activity, updateToken: Data([0x11]))
            await offline.register(activity: activity, updateToken: Data([0x12]))
            await offline.activityEnded("A2")
            try await Self.eventually { !offlineEvents.events(.retrying).isEmpty }
            #expect(await offline.pendingReports.count == 5)
            let deviceID = try #require(offline.deviceID)
            await offline.shutdown()  // the app is killed while offline

            let relaunched = try server.client(storeDirectory: directory.url)
            #expect(relaunched.deviceID == deviceID, "the device id is kept")
            let events = EventRecorder(relaunched)
            try await Self.idle(relaunched)
            try await events.waitFor(5, .delivered)
            let activityReports = events.events(.delivered).filter { $0.report?.activityID == "A2" }.compactMap(\.report?.description)
            #expect(activityReports == ["activity A2 (update token)", "activity A2 (update token)", "activity A2 ended"], "in order")
            #expect(events.events(.delivered).count == 5)
            #expect(events.events(.dropped).isEmpty, "\(events.events)")

            let rows = try await server.store.rows(device: deviceID)
            #expect(rows.filter(\.live).map(\.token) == ["02"], "the later token won: \(rows)")
            let tokens = try await server.database.query(
                "SELECT t.token, t.invalidated_at IS NULL FROM activity_tokens t JOIN activities a ON a.id = t.activity_id WHERE a.activity_key = 'A2' ORDER BY t.generation"
            )
            var generations: [(String, Bool)] = []
            for try await row in tokens.decode((String, Bool).self) { generations.append(row) }
            #expect(generations.map(\.0) == ["11", "12"], "registered in the order they were made")
            #expect(try await server.value("SELECT state FROM activities WHERE activity_key = 'A2'", as: String.self) == "ended", "the end came last")
            await relaunched.shutdown()
        }
    }

    @Test func aThrottlingStormIsWaitedOutAsRetryAfterSays() async throws {
        // Two requests a second per device: a burst of reports meets 429s with Retry-After from the real server.
        try await KitServer.with("kit_storm", deviceRateLimit: .init(ratePerSecond: 2, burst: 1)) { server in
            let directory = try TemporaryDirectory()
            let client = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(client)
            for index in 0..<6 {
                await client.register(
                    activity: LivecastActivity(id: "S\(index)", attributesType: "GameAttributes"),
                    updateToken: Data([0x20, UInt8(index)])
                )
            }
            try await Self.idle(client)
            try await events.waitFor(6, .delivered)
            let throttled = events.events(.retrying).filter { $0.status == 429 }
            #expect(!throttled.isEmpty, "the limit was met: \(events.events)")
            #expect(throttled.allSatisfy { ($0.retryDelay ?? .zero) >= .seconds(1) }, "Retry-After was obeyed: \(throttled)")
            #expect(events.events(.delivered).count == 6 && events.events(.dropped).isEmpty, "\(events.events)")
            let count = try await server.value("SELECT count(*)::int FROM activities WHERE activity_key LIKE 'S%'", as: Int.self)
            #expect(count == 6)
            await client.shutdown()
        }
    }

    @Test func serviceUnavailableIsWaitedOutAsRetryAfterSays() async throws {
        // Livecast answers 503 with Retry-After only while PostgreSQL is down; a tiny stub stands in for that.
        let stub = try await UnavailableStub.start(failures: 2)
        let directory = try TemporaryDirectory()
        var configuration = LivecastClient.Configuration(
            baseURL: stub.url,
            bundleID: "com.example.game",
            clientKey: "lc_test_key",
            storeDirectory: directory.url
        )
        configuration.retryPolicy = RetryPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(20))
        let client = try LivecastClient(configuration: configuration)
        let events = EventRecorder(client)
        let started = ContinuousClock.now
        await client.register(pushToStartToken: Data([0x01]), for: "GameAttributes")
        try await Self.idle(client)
        #expect(ContinuousClock.now - started >= .seconds(2), "two Retry-After: 1 waited out")
        try await events.waitFor(1, .delivered)
        #expect(events.events(.retrying).map(\.status) == [503, 503])
        #expect(events.events(.delivered).count == 1)
        #expect(stub.requests == 3)
        #expect(stub.lastHeaders["livecast-device-id"] == client.deviceID && stub.lastHeaders["authorization"] == "Bearer lc_test_key")
        await client.shutdown()
        await stub.stop()
    }

    @Test func anUnchangedTokenIsSentOnceAcrossLaunches() async throws {
        try await KitServer.with("kit_unchanged") { server in
            let directory = try TemporaryDirectory()
            let first = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(first)
            await first.register(pushToStartToken: Data([0xCC]), for: "GameAttributes")
            await first.register(pushToStartToken: Data([0xCC]), for: "GameAttributes")
            try await Self.idle(first)
            await first.register(pushToStartToken: Data([0xCC]), for: "GameAttributes")
            #expect(await first.pendingReports.isEmpty)
            try await events.waitFor(1, .delivered)
            #expect(events.events(.delivered).count == 1)
            let lastSeen = try await server.value("SELECT last_seen_at::text FROM push_to_start_tokens WHERE token = 'cc'", as: String.self)
            await first.shutdown()

            let second = try server.client(storeDirectory: directory.url)
            await second.register(pushToStartToken: Data([0xCC]), for: "GameAttributes")
            #expect(await second.pendingReports.isEmpty, "the relaunch remembers what was acknowledged")
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await server.value("SELECT last_seen_at::text FROM push_to_start_tokens WHERE token = 'cc'", as: String.self) == lastSeen)
            await second.shutdown()
        }
    }

    @Test func theKitsReReportKeepsATokenInsideTheServersExpiry() async throws {
        let day: TimeInterval = 86_400
        let defaults = LivecastClient.Configuration(baseURL: URL(string: "http://127.0.0.1")!, bundleID: "b", clientKey: "k")
        #expect(defaults.reReportInterval * 4 <= ReaperPolicy().tokenExpiry, "the kit re-reports well inside the server's expiry")
        #expect(LivecastClient.Configuration.maximumReReportInterval <= ReaperPolicy().tokenExpiry)
        try await KitServer.with("kit_rereport") { server in
            let directory = try TemporaryDirectory()
            let reported = Date()
            let first = try server.client(storeDirectory: directory.url, now: { reported })
            await first.register(pushToStartToken: Data([0xDD]), for: "GameAttributes")
            try await Self.idle(first)
            await first.shutdown()
            // Livecast last saw the token 8 days ago, as the kit's clock will say below.
            try await server.database.query("UPDATE push_to_start_tokens SET last_seen_at = now() - interval '8 days' WHERE token = 'dd'")
            let age = {
                try await server.value(
                    "SELECT extract(epoch FROM now() - last_seen_at)::float8 FROM push_to_start_tokens WHERE token = 'dd'",
                    as: Double.self
                ) ?? 0
            }

            // Launched the next day: nothing is due.
            let nextDay = try server.client(storeDirectory: directory.url, now: { reported + day })
            await nextDay.resume()
            #expect(await nextDay.pendingReports.isEmpty, "resume queued a report a day after the last")
            try await Self.idle(nextDay)
            #expect(try await age() > 7 * day, "a token reported yesterday is not reported again")
            await nextDay.shutdown()

            // Launched 8 days after the report: the unchanged token goes again, and Livecast refreshes it.
            let eightDays = try server.client(storeDirectory: directory.url, now: { reported + 8 * day })
            try await Self.idle(eightDays)
            let deadline = ContinuousClock.now + .seconds(30)
            while try await age() > 60, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try await age() < 60, "a token reported 8 days ago is reported again and refreshed")
            #expect(try await server.value("SELECT count(*)::int FROM push_to_start_tokens WHERE invalidated_at IS NULL", as: Int.self) == 1)
            await eightDays.shutdown()
        }
    }

    @Test func aRevokedKeyIsGivenUpOnNotRetried() async throws {
        try await KitServer.with("kit_revoked") { server in
            try await server.database.query("UPDATE api_keys SET revoked_at = now() WHERE role = 'client'")
            let directory = try TemporaryDirectory()
            let client = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(client)
            await client.register(pushToStartToken: Data([0xDD]), for: "GameAttributes")
            try await Self.idle(client)
            // The recorder reads the client's buffered events on a task of its own, which a loaded machine may run late.
            try await Self.eventually { !events.events(.dropped).isEmpty }
            let dropped = events.events(.dropped)
            #expect(dropped.count == 1 && dropped.first?.status == 401, "\(events.events)")
            #expect(events.events(.retrying).isEmpty)
            #expect(await client.pendingReports.isEmpty)
            await client.shutdown()
        }
    }

    // MARK: - Helpers

    /// Waits until the client has nothing pending.
    static func idle(_ client: LivecastClient) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.waitUntilIdle() }
            group.addTask {
                try await Task.sleep(for: Self.patience)
                throw TimedOut(pending: await client.pendingReports.map(\.description))
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Waits for an event the client tells on a task of its own (``LivecastTesting/eventually(within:every:_:_:)``).
    static func eventually(_ condition: @escaping @Sendable () -> Bool) async throws {
        try await LivecastTesting.eventually(within: Self.patience, "the client's event", condition)
    }

    struct TimedOut: Error {
        let pending: [String]
    }

    /// A loopback port nothing listens on.
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 1
        try await channel.close().get()
        return port
    }

    static func liveToken(of activityKey: String, _ server: KitServer) async throws -> String? {
        try await server.value(
            "SELECT t.token FROM activity_tokens t JOIN activities a ON a.id = t.activity_id WHERE a.activity_key = \(activityKey) AND t.invalidated_at IS NULL",
            as: String.self
        )
    }
}
