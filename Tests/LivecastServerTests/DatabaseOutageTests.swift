import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import LocalPostgres
import PostgresNIO
import Synchronization
import Testing

@testable import LivecastServer

/// PostgreSQL goes down under a running server: requests and `/ready` are answered `503` instead of hanging, and
/// everything recovers by itself when it is back.
@Suite struct DatabaseOutageTests {
    /// Updates posted without pause to a few activities while PostgreSQL restarts, three times: each is answered
    /// `202` or `503`, and each activity's updates are accepted again after each restart. The group commit's transaction used to
    /// wait for good when the restart closed its connection between two of its statements (postgres-nio never
    /// answers a statement issued on a closed connection), and every later update waited behind it.
    @Test(.timeLimit(.minutes(3))) func updatesPostedThroughARestartAreAnsweredAndAcceptedAgainAfterIt() async throws {
        try await Self.postUpdatesThroughRestarts("restart_under_updates", keyed: false) { fixture, tally in
            // Each 202 is stored once, and a 503 only when it said it could not tell.
            let stored = try await fixture.count("updates")
            let (accepted, inDoubt) = (tally.accepted, tally.inDoubt)
            print("updates through restarts: \(accepted) answered 202, \(inDoubt) answered 503 in doubt, \(stored) stored")
            #expect(stored >= accepted, "\(accepted) answered 202, \(stored) stored")
            #expect(stored - accepted <= inDoubt, "\(stored - accepted) stored though answered 503 (\(inDoubt) in doubt)")
        }
    }

    /// The same with an `Idempotency-Key` on each update, each `503` retried with the same key and body until it is
    /// answered `202`, as the README tells backends to: every update is stored exactly once, whether its retry was a
    /// replay of a commit the restart cut or the first write of it. Keyed updates go through the group commit's
    /// batches, which a restart fails as a whole and writes again one by one.
    @Test(.timeLimit(.minutes(3))) func keyedUpdatesRetriedThroughARestartAreStoredExactlyOnce() async throws {
        try await Self.postUpdatesThroughRestarts("restart_under_keyed_updates", keyed: true) { fixture, tally in
            let rows = try await fixture.client.query(
                "SELECT count(*)::int, count(DISTINCT idempotency_key)::int FROM updates WHERE idempotency_key IS NOT NULL"
            )
            var (stored, distinct) = (0, 0)
            for try await (count, keys) in rows.decode((Int, Int).self) { (stored, distinct) = (count, keys) }
            let (keys, replayed, inDoubt) = (tally.keysAccepted, tally.replayed, tally.inDoubt)
            print("keyed updates through restarts: \(keys) keys answered 202 (\(replayed) as replays, \(inDoubt) 503s in doubt), \(stored) stored")
            #expect(stored == keys, "\(keys) keys answered 202, \(stored) updates stored under a key")
            #expect(distinct == stored, "\(stored - distinct) keys stored twice")
            #expect(try await fixture.count("updates") == stored, "updates stored without their key")
        }
    }

    /// Registers sixteen activities, posts updates to them without pause through three restarts of PostgreSQL (with
    /// `keyed`, each under a key of its own, retried on `503` until `202`), checks that every activity had an update
    /// accepted after each restart and that every answer was `202` or `503`, and then hands the tally to `check`.
    private static func postUpdatesThroughRestarts(
        _ name: String,
        keyed: Bool,
        check: @Sendable (APIFixture, UpdateTally) async throws -> Void
    ) async throws {
        let postgres = try await TemporaryPostgres.start()
        do {
            // Posting without pause, the posters would soon be over the per-key rate limit.
            let unlimited = LivecastAPI.Configuration(rateLimit: .init(ratePerSecond: 1_000_000, burst: 1_000_000))
            try await APIFixture.with(name, configuration: unlimited, server: postgres.configuration) { fixture, client in
                let app = "/v1/apps/com.example.game"
                let key = fixture.key(.backend)
                let activities = 16
                for index in 0..<activities {
                    let token = String(repeating: String(format: "%02x", index + 1), count: 32)
                    let body = #"{"attributesType": "DeliveryAttributes", "pushToken": "\#(token)"}"#
                    let registered = try await client.send(.put, "\(app)/activities/order-\(index)", key: key, body: body)
                    #expect(registered.status == .created, "\(registered.text)")
                }
                let tally = UpdateTally(activities: activities)
                try await withThrowingTaskGroup(of: Void.self) { posters in
                    for index in 0..<activities {
                        posters.addTask {
                            var eta = 0
                            while !tally.isDone {
                                eta += 1
                                let body = #"{"contentState": {"eta": \#(eta)}}"#
                                let headers: HTTPFields = keyed ? [.idempotencyKey: "order-\(index)-eta-\(eta)"] : [:]
                                var answer: TestResponse
                                repeat {
                                    let path = "\(app)/activities/order-\(index)/updates"
                                    answer = try await client.send(.post, path, key: key, body: body, headers: headers)
                                    tally.record(answer, activity: index, keyed: keyed)
                                } while keyed && answer.status == .serviceUnavailable
                            }
                        }
                    }
                    // A restart catches the group commit between two statements in about half the runs: three
                    // restarts nearly always do.
                    for restart in 1...3 {
                        try await Task.sleep(for: .milliseconds(700))
                        try await postgres.restart { try await Task.sleep(for: .milliseconds(300)) }
                        tally.restarted()
                        let deadline = ContinuousClock.now + .seconds(60)
                        while !tally.everyActivityAcceptedSinceRestart, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(100))
                        }
                        #expect(tally.everyActivityAcceptedSinceRestart, "restart \(restart): activities without an update accepted after it")
                        guard tally.everyActivityAcceptedSinceRestart else { break }
                    }
                    tally.finish()
                    try await posters.waitForAll()
                }
                #expect(tally.unexpected.isEmpty, "answers other than 202 and 503: \(Set(tally.unexpected).sorted())")
                try await check(fixture, tally)
            }
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    @Test(.timeLimit(.minutes(3))) func whilePostgreSQLIsDownRequestsGet503FastAndTheServerRecovers() async throws {
        let postgres = try await TemporaryPostgres.start()
        do {
            try await APIFixture.with("outage", testing: .live, server: postgres.configuration) { fixture, client in
                let path = "/v1/apps/com.example.game/updates/1"
                let key = fixture.key(.backend)
                #expect(try await client.send(.get, path, key: key).status == .notFound)

                try await postgres.restart {
                    let started = ContinuousClock.now
                    let refused = try await client.send(.get, path, key: key)
                    let waited = ContinuousClock.now - started
                    #expect(refused.status == .serviceUnavailable, "\(refused.text)")
                    #expect(refused.errorCode == "database_unavailable")
                    #expect(refused.headers[.retryAfter] == "5")
                    // How soon is a figure (printed; about a second on a quiet machine), not a check: in the whole
                    // suite the watch's timers share two cores with every other test and run late. The bound only
                    // tells an answer from the hang it replaces (a minute in PostgresNIO's pool).
                    print("first answer while PostgreSQL is down: \(waited)")
                    #expect(waited < .seconds(30), "answered after \(waited)")
                    // Once the outage is known, nothing waits for it (the bound leaves room for a busy test machine;
                    // without the watch these requests wait a minute).
                    let write = try await client.send(
                        .put,
                        "/v1/apps/com.example.game/feeds/game-1",
                        key: fixture.key(.operator),
                        body: #"{"attributesType": "A", "attributes": {}}"#
                    )
                    #expect(write.status == .serviceUnavailable)
                    let answered = ContinuousClock.now
                    let ready = try await client.send(.get, "/ready", key: nil)
                    #expect(ready.status == .serviceUnavailable)
                    #expect(ready.json["checks"]?["database"]?.stringValue == "unreachable")
                    #expect(ContinuousClock.now - answered < .seconds(30))
                    #expect(try await client.send(.get, "/health", key: nil).status == .ok)
                }

                // It is back: so is the API, without a restart.
                let deadline = ContinuousClock.now + .seconds(30)
                var status = HTTPResponse.Status.serviceUnavailable
                while status != .notFound, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    status = try await client.send(.get, path, key: key).status
                }
                #expect(status == .notFound)
                // /ready's answer is kept for a second: the one made during the outage may still be served.
                var ready = try await client.send(.get, "/ready", key: nil).status
                while ready != .ok, ContinuousClock.now < deadline + .seconds(5) {
                    try await Task.sleep(for: .milliseconds(200))
                    ready = try await client.send(.get, "/ready", key: nil).status
                }
                #expect(ready == .ok)
            }
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }
}

/// What the posters of `postUpdatesThroughRestarts` were answered.
private final class UpdateTally: Sendable {
    private struct State {
        var acceptedSinceRestart: Set<Int> = []
        var isRestarted = false
        var isDone = false
        var unexpected: [Int] = []
        var accepted = 0
        var inDoubt = 0
        var keysAccepted = 0
        var replayed = 0
    }

    private let activities: Int
    private let state = Mutex(State())

    init(activities: Int) {
        self.activities = activities
    }

    var isDone: Bool { self.state.withLock { $0.isDone } }
    var unexpected: [Int] { self.state.withLock { $0.unexpected } }
    var everyActivityAcceptedSinceRestart: Bool { self.state.withLock { $0.acceptedSinceRestart.count == self.activities } }

    /// How many were answered `202`, and `503` saying the update may have been kept.
    var accepted: Int { self.state.withLock { $0.accepted } }
    var inDoubt: Int { self.state.withLock { $0.inDoubt } }
    /// How many keyed updates were answered `202` the first time their key was, and how many `202`s were replays.
    var keysAccepted: Int { self.state.withLock { $0.keysAccepted } }
    var replayed: Int { self.state.withLock { $0.replayed } }

    /// Counts one answer to an update of `activity`, posted with a key of its own when `keyed`.
    func record(_ answer: TestResponse, activity: Int, keyed: Bool) {
        let isReplay = answer.headers[.idempotentReplayed] == "true"
        self.state.withLock { state in
            switch answer.status {
            case .accepted:
                state.accepted += 1
                if keyed { state.keysAccepted += 1 }
                if isReplay { state.replayed += 1 }
                if state.isRestarted { state.acceptedSinceRestart.insert(activity) }
            case .serviceUnavailable: if answer.text.contains("cannot tell") { state.inDoubt += 1 }
            default: state.unexpected.append(answer.status.code)
            }
        }
    }

    /// PostgreSQL is back from a restart: updates accepted from now on count.
    func restarted() {
        self.state.withLock { state in
            state.isRestarted = true
            state.acceptedSinceRestart = []
        }
    }
    func finish() { self.state.withLock { $0.isDone = true } }
}
