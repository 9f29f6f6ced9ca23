import Foundation
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

/// One app's webhook receivers cannot hold the others' events (#66 §3): a delivery ends at its limit, head and body;
/// an app's endpoints hold at most half of an instance's workers; claims take turns between apps and endpoints.
@Suite struct WebhookFairnessTests {
    private let logger = Logger(label: "test.webhooks", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The attack, as an app's operator could make it: 8 endpoints on a receiver that answers `200` at once
    /// and then sends its body a byte every 8 seconds, and two instances of 4 workers each with the default limit.
    @Test func aTricklingReceiverDelaysAnotherAppsEventByAtMostTheDeliveryLimit() async throws {
        try await StoreFixture.with("webhook_trickle") { fixture in
            try await WebhookReceiver.with(answer: { _ in .init(trickle: .seconds(8)) }) { trickler in
                try await WebhookReceiver.with { healthy in
                    let masterKey = MasterKey.random()
                    let greedy = WebhookRows(client: fixture.client, appID: fixture.appID)
                    var inserted: [UUID] = []
                    for _ in 0..<8 {
                        inserted.append(try await greedy.insertEndpoint(url: trickler.url(), secret: .random(), masterKey: masterKey))
                    }
                    let greedyEndpoints = inserted
                    let neighbour = WebhookRows(client: fixture.client, appID: try await Self.insertApp(fixture, bundleID: "com.example.neighbour"))
                    let neighbourEndpoint = try await neighbour.insertEndpoint(url: healthy.url(), secret: .random(), masterKey: masterKey)
                    let settings = WebhookDeliverer.Settings()
                    let instances = (0..<2).map { _ in
                        WebhookService(database: fixture.client, masterKey: masterKey, settings: settings, workers: 4, logger: self.logger)
                    }
                    #expect(instances[0].perApp == 2)
                    try await greedy.insertEvents(subjects: ["order-1"], count: 3)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for instance in instances { group.addTask { try await instance.run() } }
                        let mostClaimed = Mutex(0)
                        group.addTask {
                            while !Task.isCancelled {
                                let claimed = try await Self.claimedEndpoints(of: fixture.appID, fixture.client)
                                mostClaimed.withLock { $0 = max($0, claimed) }
                                try await Task.sleep(for: .milliseconds(50))
                            }
                        }
                        try await eventually("the greedy app's receiver holding deliveries") { trickler.tricklingNow >= 2 }

                        let written = ContinuousClock.now
                        let ids = try await neighbour.insertEvents(subjects: ["order-9"]).map(String.init)
                        try await eventually(within: settings.timeout + .seconds(5), "the neighbour's event") {
                            Set(healthy.requests.flatMap(\.events).map(\.id)).isSuperset(of: ids)
                        }
                        let waited = ContinuousClock.now - written
                        #expect(waited < settings.timeout + .seconds(5), "the neighbour waited \(waited)")
                        try await eventually("the neighbour's delivery recorded") { try await neighbour.pending(neighbourEndpoint) == 0 }

                        // Each trickled answer is cut off at the limit, and its 2xx head made it a delivery.
                        try await eventually(within: settings.timeout * 4 + .seconds(10), "every greedy endpoint served") {
                            for endpoint in greedyEndpoints where try await greedy.pending(endpoint) > 0 { return false }
                            return true
                        }
                        group.cancelAll()
                        let most = mostClaimed.withLock { $0 }
                        #expect(most >= 1 && most <= 2 * instances[0].perApp, "the greedy app held \(most) of 8 workers at once")
                    }
                }
            }
        }
    }

    @Test func anAppAtItsShareGetsNoMoreWorkersWhileAnotherAppIsServed() async throws {
        try await StoreFixture.with("webhook_share") { fixture in
            try await WebhookReceiver.with(answer: { _ in .init(trickle: .milliseconds(500)) }) { trickler in
                try await WebhookReceiver.with { healthy in
                    let masterKey = MasterKey.random()
                    let busy = WebhookRows(client: fixture.client, appID: fixture.appID)
                    for _ in 0..<2 { try await busy.insertEndpoint(url: trickler.url(), secret: .random(), masterKey: masterKey) }
                    let other = WebhookRows(client: fixture.client, appID: try await Self.insertApp(fixture, bundleID: "com.example.other"))
                    try await other.insertEndpoint(url: healthy.url(), secret: .random(), masterKey: masterKey)
                    try await busy.insertEvents(subjects: ["order-1"])
                    // The trickled delivery ends at this limit: long enough for the checks made while it holds.
                    try await withSender(timeout: .seconds(5)) { sender in
                        let deliverer = WebhookDeliverer(
                            database: fixture.client,
                            masterKey: masterKey,
                            sender: sender,
                            perApp: 1,
                            logger: self.logger
                        )
                        // One worker delivers to the busy app, whose receiver keeps it until the limit.
                        let first = Task { try await deliverer.deliverOnce() }
                        try await eventually("the busy app's first delivery under way") { trickler.tricklingNow == 1 }
                        #expect(try await !deliverer.deliverOnce(), "the busy app's other endpoint waits: the app has its share")
                        try await other.insertEvents(subjects: ["order-2"])
                        #expect(try await deliverer.deliverOnce(), "another app's endpoint is served")
                        #expect(healthy.requests.count == 1)
                        #expect(trickler.requests.count == 1 && trickler.tricklingNow == 1)
                        #expect(try await first.value)
                        #expect(try await deliverer.deliverOnce(), "once the first delivery ended, the busy app's other endpoint")
                        #expect(trickler.requests.count == 2)
                    }
                }
            }
        }
    }

    @Test func claimsTakeTurnsBetweenAppsAndBetweenEachAppsEndpoints() async throws {
        try await StoreFixture.with("webhook_turns") { fixture in
            try await WebhookReceiver.with { receiver in
                let masterKey = MasterKey.random()
                let many = WebhookRows(client: fixture.client, appID: fixture.appID)
                let first = try await many.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                let second = try await many.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                let one = WebhookRows(client: fixture.client, appID: try await Self.insertApp(fixture, bundleID: "com.example.one"))
                let only = try await one.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                try await many.insertEvents(subjects: ["order-1"], count: 6)  // 6 for each of its endpoints
                try await one.insertEvents(subjects: ["order-2"], count: 6)
                var settings = WebhookDeliverer.Settings()
                settings.batchSize = 1
                try await withSender { sender in
                    let deliverer = WebhookDeliverer(
                        database: fixture.client,
                        masterKey: masterKey,
                        sender: sender,
                        settings: settings,
                        logger: self.logger
                    )
                    while try await deliverer.deliverOnce() {}
                }
                let served = receiver.requests.compactMap { $0.headers["livecast-webhook-id"].flatMap(UUID.init(uuidString:)) }
                #expect(served.count == 18)
                // While both apps have work, they take turns, whatever their numbers of endpoints.
                let apps = served.prefix(12).map { $0 == only ? "one" : "many" }
                #expect(zip(apps, apps.dropFirst()).allSatisfy { $0 != $1 }, "\(apps)")
                // And the app with two endpoints takes them in turn, though the first is always due.
                let endpoints = served.filter { $0 != only }
                #expect(zip(endpoints, endpoints.dropFirst()).allSatisfy { $0 != $1 }, "\(endpoints)")
                #expect(Set(endpoints) == [first, second])
            }
        }
    }

    private static func insertApp(_ fixture: StoreFixture, bundleID: String) async throws -> Int64 {
        let rows = try await fixture.client.query(
            """
            INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
            VALUES (\(bundleID), 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/b.p8') RETURNING id
            """
        )
        for try await id in rows.decode(Int64.self) { return id }
        throw StoreError(.notFound, "no app")
    }

    /// How many of an app's endpoints are claimed under a live lease now.
    private static func claimedEndpoints(of appID: Int64, _ client: PostgresClient) async throws -> Int {
        let rows = try await client.query(
            "SELECT count(*)::int FROM webhook_endpoints WHERE app_id = \(appID) AND claimed_by IS NOT NULL AND lease_until > now()"
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
