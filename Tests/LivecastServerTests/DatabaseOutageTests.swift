import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastTesting
import LocalPostgres
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
        let postgres = try await TemporaryPostgres.start()
        do {
            // Posting without pause, the posters would soon be over the per-key rate limit.
            let unlimited = LivecastAPI.Configuration(rateLimit: .init(ratePerSecond: 1_000_000, burst: 1_000_000))
            try await APIFixture.with("restart_under_updates", configuration: unlimited, server: postgres.configuration) { fixture, client in
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
                                let answer = try await client.send(.post, "\(app)/activities/order-\(index)/updates", key: key, body: body)
                                tally.record(answer.status, activity: index, inDoubt: answer.text.contains("cannot tell"))
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
                // Each 202 is stored once, and a 503 only when it said it could not tell.
                let rows = try await fixture.client.query("SELECT count(*)::int FROM updates")
                let stored = try await rows.decode(Int.self).reduce(0) { $1 }
                let (accepted, inDoubt) = (tally.accepted, tally.inDoubt)
                print("updates through restarts: \(accepted) answered 202, \(inDoubt) answered 503 in doubt, \(stored) stored")
                #expect(stored >= accepted, "\(accepted) answered 202, \(stored) stored")
                #expect(stored - accepted <= inDoubt, "\(stored - accepted) stored though answered 503 (\(inDoubt) in doubt)")
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
                #expect(try await client.send(.get, "/ready", key: nil).status == .ok)
            }
        } catch {
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }
}

/// What the posters of `updatesPostedThroughARestartAreAnsweredAndAcceptedAgainAfterIt` were answered.
private final class UpdateTally: Sendable {
    private struct State {
        var acceptedSinceRestart: Set<Int> = []
        var isRestarted = false
        var isDone = false
        var unexpected: [Int] = []
        var accepted = 0
        var inDoubt = 0
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

    func record(_ status: HTTPResponse.Status, activity: Int, inDoubt: Bool) {
        self.state.withLock { state in
            switch status {
            case .accepted:
                state.accepted += 1
                if state.isRestarted { state.acceptedSinceRestart.insert(activity) }
            case .serviceUnavailable: if inDoubt { state.inDoubt += 1 }
            default: state.unexpected.append(status.code)
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
