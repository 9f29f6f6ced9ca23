import Foundation
import HTTPTypes
import Hummingbird
import LivecastStore
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// A real HTTP receiver for webhook tests: a Hummingbird server on 127.0.0.1, a free port, that records every request
/// (headers and body) and answers as `answer` says for the request's number (0 for the first): at once, after a
/// delay, or with its head at once and then its body a byte at a time until the client hangs up (a trickle).
package final class WebhookReceiver: Sendable {
    package struct Received: Sendable {
        /// By lowercased name.
        package var headers: [String: String]
        package var body: String
        package var status: Int
        /// The events' ids and subject ids, in the body's order.
        package var events: [(id: String, subject: String)] {
            guard let object = try? JSONSerialization.jsonObject(with: Data(self.body.utf8)) as? [String: Any],
                let events = object["events"] as? [[String: Any]]
            else { return [] }
            return events.map { event in
                (event["id"] as? String ?? "", (event["subject"] as? [String: Any])?["id"] as? String ?? "")
            }
        }
    }

    /// What to answer: a status, headers, and how long to wait first.
    package struct Answer: Sendable {
        package var status: Int = 200
        package var headers: [(String, String)] = []
        package var delay: Duration = .zero
        /// When set, the head goes at once and the body follows one byte at a time, this long apart, for as long as
        /// the client listens.
        package var trickle: Duration?

        package init(status: Int = 200, headers: [(String, String)] = [], delay: Duration = .zero, trickle: Duration? = nil) {
            self.status = status
            self.headers = headers
            self.delay = delay
            self.trickle = trickle
        }
    }

    private let received = Mutex<[Received]>([])
    private let arrivals = Mutex(0)
    private let trickles = Mutex<(now: Int, most: Int)>((0, 0))
    private let answer: @Sendable (Int) async -> Answer
    package let port: Int

    private init(port: Int, answer: @escaping @Sendable (Int) async -> Answer) {
        self.port = port
        self.answer = answer
    }

    package var requests: [Received] { self.received.withLock { $0 } }

    /// Trickling answers whose client still listens.
    package var tricklingNow: Int { self.trickles.withLock { $0.now } }
    /// The most trickling answers whose clients listened at once.
    package var mostTricklingAtOnce: Int { self.trickles.withLock { $0.most } }

    /// The receiver's URL for `path`.
    package func url(_ path: String = "/hook") -> String { "http://127.0.0.1:\(self.port)\(path)" }

    /// Runs a receiver for `body`'s duration.
    package static func with<Result: Sendable>(
        answer: @escaping @Sendable (Int) async -> Answer = { _ in Answer() },
        _ body: (WebhookReceiver) async throws -> Result
    ) async throws -> Result {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let holder = Mutex<WebhookReceiver?>(nil)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            guard let receiver = holder.withLock({ $0 }) else { return Response(status: .serviceUnavailable) }
            return try await receiver.handle(request)
        }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: Logger(label: "test.webhook-receiver", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            let receiver = WebhookReceiver(port: port, answer: answer)
            holder.withLock { $0 = receiver }
            return try await body(receiver)
        }
    }

    private func handle(_ request: Request) async throws -> Response {
        let headers = Dictionary(request.headers.map { ($0.name.canonicalName.lowercased(), $0.value) }) { _, last in last }
        let number = self.arrivals.withLock { count in
            defer { count += 1 }
            return count
        }
        let answer = await self.answer(number)
        var fields = HTTPFields()
        for (name, value) in answer.headers { fields[HTTPField.Name(name)!] = value }
        guard let trickle = answer.trickle else {
            self.record(Received(headers: headers, body: String(buffer: try await request.body.collect(upTo: 1 << 20)), status: answer.status))
            if answer.delay > .zero { try? await Task.sleep(for: answer.delay) }
            return Response(status: .init(code: answer.status), headers: fields)
        }
        return Response(
            status: .init(code: answer.status),
            headers: fields,
            body: ResponseBody { writer in
                self.trickles.withLock { counts in
                    counts.now += 1
                    counts.most = max(counts.most, counts.now)
                }
                defer { self.trickles.withLock { $0.now -= 1 } }
                // The request's body is read in here, so that the connection is watched from its end on: the client's
                // hanging up cancels the trickle at once.
                _ = try? await request.body.consumeWithCancellationOnInboundClose { body in
                    self.record(Received(headers: headers, body: String(buffer: try await body.collect(upTo: 1 << 20)), status: answer.status))
                    while true {
                        try await writer.write(ByteBuffer(string: " "))
                        try await Task.sleep(for: trickle)
                    }
                }
                try? await writer.finish(nil)
            }
        )
    }

    private func record(_ request: Received) {
        self.received.withLock { $0.append(request) }
    }
}

/// Webhook rows for tests, written directly (the endpoints' own API is not needed here).
package struct WebhookRows {
    package let client: PostgresClient
    package let appID: Int64

    package init(client: PostgresClient, appID: Int64) {
        self.client = client
        self.appID = appID
    }

    /// Inserts an enabled endpoint for `url` with `secret` (and `previous`, live for an hour) sealed under `masterKey`.
    @discardableResult
    package func insertEndpoint(url: String, secret: WebhookSecret, previous: WebhookSecret? = nil, masterKey: MasterKey) async throws -> UUID {
        let id = UUID()
        let sealed = ByteBuffer(bytes: secret.sealed(for: id, with: masterKey))
        let sealedPrevious = previous.map { ByteBuffer(bytes: $0.sealed(for: id, with: masterKey)) }
        try await self.client.query(
            """
            INSERT INTO webhook_endpoints (id, app_id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at)
            VALUES (\(id), \(self.appID), \(url), \(sealed), \(sealedPrevious),
                    CASE WHEN \(sealedPrevious)::bytea IS NULL THEN NULL ELSE now() + interval '1 hour' END)
            """
        )
        return id
    }

    /// Writes `count` events for each of `subjects`, interleaved (subject by subject within each round), in one
    /// statement; returns their ids.
    @discardableResult
    package func insertEvents(subjects: [String], count: Int = 1) async throws -> [Int64] {
        let rows = try await self.client.query(
            """
            INSERT INTO events (app_id, type, subject_kind, subject_id, data)
            SELECT \(self.appID), 'activity.registered', 'activity', s.subject, jsonb_build_object('n', n)
            FROM generate_series(1, \(count)) AS n, unnest(\(subjects)::text[]) WITH ORDINALITY AS s(subject, ord)
            ORDER BY n, s.ord
            RETURNING id
            """
        )
        var ids: [Int64] = []
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        return ids.sorted()
    }

    /// The endpoint's pending deliveries.
    package func pending(_ endpoint: UUID) async throws -> Int {
        let rows = try await self.client.query(
            "SELECT count(*)::int FROM webhook_deliveries WHERE endpoint_id = \(endpoint) AND state = 'pending'"
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// The endpoint's delivery state.
    package func state(_ endpoint: UUID) async throws -> (failures: Int, lastFailure: String?, retryInSeconds: Double, claimed: Bool) {
        let rows = try await self.client.query(
            """
            SELECT consecutive_failures, last_failure, extract(epoch FROM next_attempt_at - now())::float8, claimed_by IS NOT NULL
            FROM webhook_endpoints WHERE id = \(endpoint)
            """
        )
        for try await row in rows.decode((Int, String?, Double, Bool).self) { return row }
        return (0, nil, 0, false)
    }
}
