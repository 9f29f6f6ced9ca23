import Crypto
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Synchronization
import Testing

/// Webhook delivery against a real HTTP receiver: signed batches, retries until delivered in order, a claim taken
/// over after its lease, isolation of a failing endpoint, Retry-After, and the address check.
@Suite struct WebhookDeliveryTests {
    private let logger = Logger(label: "test.webhooks", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A deliverer's settings with a fast backoff.
    private static func fast() -> WebhookDeliverer.Settings {
        var settings = WebhookDeliverer.Settings()
        settings.backoff = WebhookBackoff(base: .milliseconds(20), cap: .milliseconds(100))
        return settings
    }

    @Test func aBatchIsSignedWithTheSecretAndDuringARotationWithThePreviousOneToo() async throws {
        try await StoreFixture.with("webhook_signature") { fixture in
            try await WebhookReceiver.with { receiver in
                let masterKey = MasterKey.random()
                let (secret, previous) = (WebhookSecret.random(), WebhookSecret.random())
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: secret, previous: previous, masterKey: masterKey)
                let ids = try await rows.insertEvents(subjects: ["order-1", "order-2"], count: 2)
                try await withSender { sender in
                    let deliverer = WebhookDeliverer(database: fixture.client, masterKey: masterKey, sender: sender, logger: self.logger)

                    #expect(try await deliverer.deliverOnce())
                    #expect(try await !deliverer.deliverOnce(), "nothing left")
                    let request = try #require(receiver.requests.first)
                    #expect(request.headers["content-type"] == "application/json")
                    #expect(request.headers["user-agent"] == "Livecast-Webhooks/1")
                    #expect(request.headers["livecast-webhook-id"] == endpoint.uuidString.lowercased())
                    #expect(request.events.map(\.id) == ids.map(String.init))
                    #expect(request.body.hasPrefix("{\"events\":[{"))

                    let (timestamp, codes) = try Self.signature(request.headers["livecast-signature"])
                    #expect(abs(Double(timestamp) - Date().timeIntervalSince1970) < 60)
                    #expect(codes.count == 2)
                    #expect(codes[0] == Self.hmac(request.body, timestamp, secret))
                    #expect(codes[1] == Self.hmac(request.body, timestamp, previous))
                    let tampered = request.body.replacingOccurrences(of: "order-1", with: "order-9")
                    #expect(tampered != request.body)
                    #expect(!codes.contains(Self.hmac(tampered, timestamp, secret)))
                    #expect(!codes.contains(Self.hmac(request.body, timestamp + 1, secret)))
                    #expect(try await rows.pending(endpoint) == 0)

                    // Once the previous secret has expired, only the current one signs.
                    try await fixture.client.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second'")
                    try await rows.insertEvents(subjects: ["order-3"])
                    #expect(try await deliverer.deliverOnce())
                    let second = try #require(receiver.requests.last)
                    let (t2, onlyCurrent) = try Self.signature(second.headers["livecast-signature"])
                    #expect(onlyCurrent == [Self.hmac(second.body, t2, secret)])
                    #expect(!second.headers.values.contains { $0.contains(secret.text) || $0.contains(previous.text) })
                }
            }
        }
    }

    @Test func aReceiverFailingForAWhileGetsEveryEventInOrderPerSubject() async throws {
        try await StoreFixture.with("webhook_retries") { fixture in
            // 503 for the first four requests (one with a Retry-After of 0), then 200.
            try await WebhookReceiver.with(answer: { number in
                number < 4 ? .init(status: 503, headers: number == 1 ? [("Retry-After", "0")] : []) : .init()
            }) { receiver in
                let masterKey = MasterKey.random()
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                var settings = Self.fast()
                settings.batchSize = 7
                let service = WebhookService(
                    database: fixture.client,
                    masterKey: masterKey,
                    settings: settings,
                    workers: 3,
                    pollInterval: .milliseconds(20),
                    logger: self.logger
                )
                let subjects = ["order-1", "order-2", "order-3"]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await service.run() }
                    var written: [Int64] = []
                    for _ in 0..<5 {
                        written += try await rows.insertEvents(subjects: subjects, count: 4)
                    }
                    try await eventually("every event delivered") { try await rows.pending(endpoint) == 0 }
                    group.cancelAll()
                    let delivered = receiver.requests.filter { $0.status == 200 }.flatMap(\.events)
                    #expect(Set(delivered.map(\.id)) == Set(written.map(String.init)), "none lost")
                    #expect(delivered.count == written.count, "each once: no claim was taken over")
                    for subject in subjects {
                        let ids = delivered.filter { $0.subject == subject }.compactMap { Int64($0.id) }
                        #expect(ids == ids.sorted(), "\(subject) in order")
                    }
                    #expect(receiver.requests.filter { $0.status == 503 }.count == 4)
                    let state = try await rows.state(endpoint)
                    #expect(state.failures == 0 && !state.claimed)
                }
            }
        }
    }

    @Test func aClaimTakenOverAfterItsLeaseIsDeliveredAgainAndTheFirstAckIsRefused() async throws {
        try await StoreFixture.with("webhook_takeover") { fixture in
            try await WebhookReceiver.with { receiver in
                let masterKey = MasterKey.random()
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                let ids = try await rows.insertEvents(subjects: ["order-1", "order-2"], count: 3)
                try await withSender { sender in
                    // The first deliverer claims with a short lease, sends, and dies (kill -9) before recording it.
                    let first = WebhookDeliveries(database: fixture.client, claimer: UUID(), lease: .milliseconds(300), logger: self.logger)
                    let batch = try #require(try await first.claim())
                    #expect(batch.deliveries.map(\.eventID) == ids)
                    #expect(await sender.post(batch.body, to: batch.url, headers: []) == .delivered(status: 200))

                    // Another takes the endpoint over once the lease has run out, and sends the batch again.
                    let second = WebhookDeliverer(database: fixture.client, masterKey: masterKey, sender: sender, logger: self.logger)
                    try await eventually("the lease to run out") { try await second.deliverOnce() }
                    #expect(try await first.acknowledge(batch) == false, "the first claimer's ack is refused")
                    #expect(try await first.fail(batch, reason: "late", retryIn: .seconds(60)) == nil)
                    #expect(try await first.renew(endpointID: endpoint) == false)

                    let requests = receiver.requests
                    #expect(requests.count == 2)
                    #expect(requests.map { $0.events.map(\.id) } == [ids.map(String.init), ids.map(String.init)], "duplicates, each with its id")
                    #expect(try await rows.pending(endpoint) == 0)
                    let state = try await rows.state(endpoint)
                    #expect(state.failures == 0 && state.lastFailure == nil && !state.claimed)
                }
            }
        }
    }

    @Test func anEndpointThatHangsOrFailsDoesNotDelayAnother() async throws {
        try await StoreFixture.with("webhook_isolation") { fixture in
            try await WebhookReceiver.with(answer: { _ in .init(status: 200, delay: .seconds(10)) }) { slow in
                try await WebhookReceiver.with(answer: { _ in .init(status: 500) }) { failing in
                    try await WebhookReceiver.with { healthy in
                        let masterKey = MasterKey.random()
                        let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                        let slowEndpoint = try await rows.insertEndpoint(url: slow.url(), secret: .random(), masterKey: masterKey)
                        let failingEndpoint = try await rows.insertEndpoint(url: failing.url(), secret: .random(), masterKey: masterKey)
                        let healthyEndpoint = try await rows.insertEndpoint(url: healthy.url(), secret: .random(), masterKey: masterKey)
                        var settings = Self.fast()
                        // Wide enough that a runner starved by parallel suites does not pass it on the healthy endpoint alone.
                        settings.timeout = .seconds(4)
                        let service = WebhookService(
                            database: fixture.client,
                            masterKey: masterKey,
                            settings: settings,
                            workers: 3,
                            pollInterval: .milliseconds(20),
                            logger: self.logger
                        )
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { try await service.run() }
                            var slowest: Duration = .zero
                            for round in 0..<4 {
                                let started = ContinuousClock.now
                                let ids = try await rows.insertEvents(subjects: ["order-\(round)"]).map(String.init)
                                try await eventually(within: .seconds(5), "the healthy endpoint's round \(round)") {
                                    Set(healthy.requests.flatMap(\.events).map(\.id)).isSuperset(of: ids)
                                }
                                slowest = max(slowest, ContinuousClock.now - started)
                            }
                            // Had it waited behind the slow endpoint, a round would have taken the whole timeout.
                            #expect(slowest < settings.timeout, "the healthy endpoint waited \(slowest)")
                            try await eventually("the slow endpoint to time out") { try await rows.state(slowEndpoint).lastFailure == "timeout" }
                            // A starved runner can time an answer out too, so wait for a 500 to be the failure on record.
                            try await eventually("the failing endpoint to fail again and again, on its 500") {
                                guard failing.requests.count >= 3 else { return false }
                                return try await rows.state(failingEndpoint).lastFailure == "http_500"
                            }
                            try await eventually("the healthy endpoint's last batch to be acknowledged") {
                                try await rows.pending(healthyEndpoint) == 0
                            }
                            #expect(try await rows.pending(failingEndpoint) > 0)
                            group.cancelAll()
                        }
                    }
                }
            }
        }
    }

    @Test func retryAfterIsHonoured() async throws {
        try await StoreFixture.with("webhook_retry_after") { fixture in
            try await WebhookReceiver.with(answer: { _ in .init(status: 429, headers: [("Retry-After", "120")]) }) { receiver in
                let masterKey = MasterKey.random()
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                try await rows.insertEvents(subjects: ["order-1"], count: 2)
                try await withSender { sender in
                    let deliverer = WebhookDeliverer(database: fixture.client, masterKey: masterKey, sender: sender, logger: self.logger)
                    #expect(try await deliverer.deliverOnce())
                    let state = try await rows.state(endpoint)
                    #expect(state.lastFailure == "http_429" && state.failures == 1 && !state.claimed)
                    #expect(state.retryInSeconds >= 119 && state.retryInSeconds <= 121, "next attempt in \(state.retryInSeconds) s")
                    #expect(try await !deliverer.deliverOnce(), "not due before the hint")
                    let attempts = try await fixture.client.query("SELECT attempts, state FROM webhook_deliveries ORDER BY id")
                    for try await (count, rowState) in attempts.decode((Int, String).self) { #expect(count == 1 && rowState == "pending") }
                }
            }
        }
    }

    @Test func deliveriesOlderThanTheGiveUpAgeFailAtTheirNextFailedAttemptUntilReplayed() async throws {
        try await StoreFixture.with("webhook_give_up") { fixture in
            try await WebhookReceiver.with(answer: { _ in .init(status: 500) }) { receiver in
                let masterKey = MasterKey.random()
                let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
                let endpoint = try await rows.insertEndpoint(url: receiver.url(), secret: .random(), masterKey: masterKey)
                try await rows.insertEvents(subjects: ["order-1"], count: 3)
                try await fixture.client.query(
                    "UPDATE webhook_deliveries SET created_at = now() - interval '25 hours' WHERE id IN (SELECT min(id) FROM webhook_deliveries)"
                )
                try await withSender { sender in
                    let deliverer = WebhookDeliverer(database: fixture.client, masterKey: masterKey, sender: sender, logger: self.logger)
                    #expect(try await deliverer.deliverOnce())
                    let states = try await fixture.client.query(
                        "SELECT state, failed_at IS NOT NULL, last_error FROM webhook_deliveries WHERE endpoint_id = \(endpoint) ORDER BY id"
                    )
                    var seen: [(String, Bool, String?)] = []
                    for try await row in states.decode((String, Bool, String?).self) { seen.append(row) }
                    #expect(seen.map(\.0) == ["failed", "pending", "pending"])
                    #expect(seen[0].1 && seen[0].2 == "http_500")

                    // A replay owes it again for another 24 hours: its next failed attempt keeps it pending.
                    let endpoints = WebhookEndpoints(client: fixture.client, logger: self.logger)
                    #expect(try await endpoints.replayFailed(appID: fixture.appID, id: endpoint) == 1)
                    try await fixture.client.query("UPDATE webhook_endpoints SET next_attempt_at = now() WHERE id = \(endpoint)")
                    #expect(try await deliverer.deliverOnce())
                    let after = try await fixture.client.query("SELECT count(*)::int FROM webhook_deliveries WHERE state = 'failed'")
                    for try await failed in after.decode(Int.self) { #expect(failed == 0) }
                }
            }
        }
    }

    @Test func anEndpointOnAPrivateAddressIsRefusedUnlessAllowed() async throws {
        try await StoreFixture.with("webhook_private") { fixture in
            let masterKey = MasterKey.random()
            let rows = WebhookRows(client: fixture.client, appID: fixture.appID)
            // A name that resolves to loopback over HTTPS (only plain HTTP to loopback is let through), the cloud
            // metadata service, a private address and an IPv4-mapped loopback.
            let urls = [
                "https://localhost:9/hook", "http://169.254.169.254/latest/meta-data", "http://10.1.2.3/hook", "https://[::ffff:127.0.0.1]/x",
            ]
            var endpoints: [UUID] = []
            for url in urls { endpoints.append(try await rows.insertEndpoint(url: url, secret: .random(), masterKey: masterKey)) }
            try await rows.insertEvents(subjects: ["order-1"])
            try await withSender(timeout: .seconds(2)) { sender in
                let deliverer = WebhookDeliverer(database: fixture.client, masterKey: masterKey, sender: sender, logger: self.logger)
                for _ in urls {
                    let claimed = try await deliverer.deliverOnce()
                    #expect(claimed)
                }
                for (url, endpoint) in zip(urls, endpoints) {
                    #expect(try await rows.state(endpoint).lastFailure == "address_not_allowed", "\(url)")
                    #expect(try await rows.pending(endpoint) == 1)
                }
            }

            // With private addresses allowed, the loopback HTTPS endpoint is tried (and fails to connect: nothing listens).
            try await fixture.client.query("UPDATE webhook_endpoints SET next_attempt_at = now() WHERE id = \(endpoints[0])")
            try await fixture.client.query("UPDATE webhook_endpoints SET enabled = false WHERE id <> \(endpoints[0])")
            var allowing = WebhookDeliverer.Settings()
            allowing.allowPrivate = true
            allowing.timeout = .seconds(2)
            try await withSender(timeout: .seconds(2), allowPrivate: true) { permissive in
                let tryingDeliverer = WebhookDeliverer(
                    database: fixture.client,
                    masterKey: masterKey,
                    sender: permissive,
                    settings: allowing,
                    logger: self.logger
                )
                let claimed = try await tryingDeliverer.deliverOnce()
                #expect(claimed)
                #expect(try await rows.state(endpoints[0]).lastFailure == "connection_error")
            }
        }
    }

    @Test func backoffDoublesWithJitterAndRetryAfterReadsSecondsAndDates() {
        let backoff = WebhookBackoff()
        for failures in 1...20 {
            let full = min(Duration.seconds(5) * (1 << min(failures - 1, 30)), .seconds(3600))
            let delay = backoff.delay(afterFailures: failures)
            #expect(delay >= full / 2 && delay <= full, "\(failures): \(delay)")
        }
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(600)) == .seconds(600))
        #expect(backoff.delay(afterFailures: 1, retryAfter: .seconds(7200)) == .seconds(3600), "capped at an hour")
        #expect(WebhookBackoff.retryAfter("120") == .seconds(120))
        #expect(WebhookBackoff.retryAfter(" 0 ") == .zero)
        #expect(WebhookBackoff.retryAfter("soon") == nil)
        #expect(WebhookBackoff.retryAfter("-5") == nil)
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(WebhookBackoff.retryAfter("Wed, 21 Oct 2015 07:30:00 GMT", now: now) == .seconds(120))
        #expect(WebhookBackoff.retryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == .zero, "a past date: no wait")
    }

    /// The timestamp and the `v1` codes of a `Livecast-Signature` header.
    private static func signature(_ header: String?) throws -> (timestamp: Int64, codes: [String]) {
        let parts = try #require(header).split(separator: ",").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
        let timestamp = try #require(parts.first { $0.first == "t" }.flatMap { Int64($0[1]) })
        return (timestamp, parts.filter { $0.first == "v1" }.map { $0[1] })
    }

    /// A receiver's check: hex HMAC-SHA256 over `"<t>.<body>"` keyed by the secret's UTF-8 bytes.
    private static func hmac(_ body: String, _ timestamp: Int64, _ secret: WebhookSecret) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(timestamp).\(body)".utf8), using: SymmetricKey(data: Data(secret.text.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }
}
