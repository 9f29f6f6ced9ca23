import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import LocalPostgres
import PostgresNIO
import Testing

@testable import LivecastServer

/// An update whose connection is lost while PostgreSQL commits it. Each test has its own PostgreSQL server: it makes
/// every commit of the cluster wait for a synchronous standby that does not exist, so that a commit is durable and
/// its answer never leaves, then cuts the connection that waits.
@Suite struct LostCommitTests {
    /// An update without a key goes through the group commit, which asks PostgreSQL what became of its transaction
    /// and answers `202` for the update it kept, stored once. It used to write the update again (a second push).
    @Test(.timeLimit(.minutes(3))) func aGroupCommitsUpdateIsAnsweredAsPostgreSQLKeptIt() async throws {
        try await Self.postWhileItsCommitIsCut("lost_commit_group", to: .activity, headers: [:])
    }

    /// An update with an `Idempotency-Key` goes through the group commit too, and its answer is kept in the same
    /// transaction: it is answered `202` for the update PostgreSQL kept, and the request sent again gets that answer.
    @Test(.timeLimit(.minutes(3))) func aKeyedUpdateIsAnsweredAsPostgreSQLKeptItAndAgainWhenRetried() async throws {
        try await Self.postWhileItsCommitIsCut("lost_commit_keyed", to: .activity, headers: [.idempotencyKey: "eta-5"])
    }

    /// A feed's update is written alone; the server asks whether the outbox holds its row, and answers `202` for the
    /// update it kept. It used to answer `503` for it.
    @Test(.timeLimit(.minutes(3))) func anUpdateWrittenAloneIsAnsweredAsPostgreSQLKeptIt() async throws {
        try await Self.postWhileItsCommitIsCut("lost_commit_alone", to: .feed, headers: [:])
    }

    /// What the update goes to: a standalone activity (its updates share the group commit) or a feed (written alone).
    enum Target {
        case activity, feed

        /// The target's path, under the test app.
        var path: String {
            switch self {
            case .activity: "/v1/apps/com.example.game/activities/order-1"
            case .feed: "/v1/apps/com.example.game/feeds/game-1"
            }
        }

        /// The ids of the updates stored for the target.
        var storedUpdates: PostgresQuery {
            switch self {
            case .activity: "SELECT u.id FROM updates u JOIN activities a ON a.id = u.activity_id WHERE a.activity_key = 'order-1'"
            case .feed: "SELECT u.id FROM updates u JOIN feeds f ON f.id = u.feed_id WHERE f.feed_key = 'game-1'"
            }
        }
    }

    /// Makes `target`, posts an update to it with `headers` while its commit is cut, and checks the answer is `202`
    /// for the one update stored.
    private static func postWhileItsCommitIsCut(_ name: String, to target: Target, headers: HTTPFields) async throws {
        // Commits wait for the standby only when they are synchronous (throwaway servers' commits are not).
        let postgres = try await TemporaryPostgres.start(settings: ["synchronous_commit": "on"])
        do {
            try await APIFixture.with(name, testing: .live, server: postgres.configuration) { fixture, client in
                let key = fixture.key(.backend)
                let made =
                    switch target {
                    case .activity:
                        try await client.send(
                            .put,
                            target.path,
                            key: key,
                            body: #"{"attributesType": "DeliveryAttributes", "pushToken": "\#(String(repeating: "ab", count: 32))"}"#
                        )
                    case .feed:
                        try await client.send(
                            .put,
                            target.path,
                            key: fixture.key(.operator),
                            body: #"{"attributesType": "DeliveryAttributes", "attributes": {}}"#
                        )
                    }
                #expect(made.status == .created, "\(made.text)")

                try await Self.makeCommitsWaitForAStandby(fixture.client, true)
                let port = try #require(client.port)
                let sent = ContinuousClock.now
                let post = TestClient.Request(
                    "\(target.path)/updates",
                    method: .post,
                    authority: "localhost",
                    headers: .api(key: key, json: true, adding: headers),
                    body: ByteBuffer(string: #"{"contentState": {"eta": 5}}"#)
                )
                async let posted = Self.send(post, port: port)
                let waiting = try await Self.backendsWaitingForTheStandby(fixture.client)
                let foundAfter = ContinuousClock.now - sent
                try #require(waiting.count == 1, "backends whose commit waits \(foundAfter) after the update was sent: \(waiting)")
                // Cut the connection while its commit, durable here, waits; then let later commits through.
                try await fixture.client.query("SELECT pg_terminate_backend(pid) FROM unnest(\(waiting)::int[]) AS pid")
                try await Self.makeCommitsWaitForAStandby(fixture.client, false)

                let answer = try await posted
                let answerText = String(buffer: answer.body ?? ByteBuffer())
                #expect(
                    answer.head.status == .accepted,
                    "\(answerText); its commit was found waiting \(foundAfter) and it was answered \(ContinuousClock.now - sent) after it was sent"
                )
                let stored = try await fixture.client.query(target.storedUpdates)
                let ids = try await stored.decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
                #expect(ids.count == 1, "the update was stored \(ids.count) times")
                let answered = try JSONDecoder().decode(JSONValue.self, from: Data(answerText.utf8))
                #expect(ids.first.map(Int.init) == answered["updateId"]?.intValue, "\(answerText)")
                if headers[.idempotencyKey] != nil {
                    let again = try await Self.send(post, port: port)
                    #expect(again.head.status == .accepted && String(buffer: again.body ?? ByteBuffer()) == answerText)
                    #expect(again.head.headerFields[.idempotentReplayed] == "true")
                }
            }
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    /// Sends `request` on a connection of its own to the server on `port`, and waits for its answer for up to 150 s.
    /// The live test client waits 20 s, which the update's wait for its cut, and the server's questions after it, can
    /// exceed while the rest of the suite starts PostgreSQL servers on the same two cores.
    private static func send(_ request: TestClient.Request, port: Int) async throws -> TestClient.Response {
        let client = TestClient(host: "localhost", port: port, configuration: .init(timeout: .seconds(150)))
        client.connect()
        do {
            let response = try await client.execute(request)
            try await client.shutdown()
            return response
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// Sets `synchronous_standby_names` to a standby that never connects (every commit then waits for it, durable
    /// locally), or back to none.
    private static func makeCommitsWaitForAStandby(_ client: PostgresClient, _ waits: Bool) async throws {
        let setting = waits ? "ALTER SYSTEM SET synchronous_standby_names = 'nobody'" : "ALTER SYSTEM RESET synchronous_standby_names"
        try await client.query(PostgresQuery(unsafeSQL: setting))
        try await client.query("SELECT pg_reload_conf()")
    }

    /// The backends of this database whose commit waits for the standby, once there is one (within a minute).
    private static func backendsWaitingForTheStandby(_ client: PostgresClient) async throws -> [Int32] {
        for _ in 0..<3000 {
            let rows = try await client.query(
                "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = current_database()"
            )
            let pids = try await rows.decode(Int32.self).reduce(into: [Int32]()) { $0.append($1) }
            if !pids.isEmpty { return pids }
            try await Task.sleep(for: .milliseconds(20))
        }
        return []
    }
}
