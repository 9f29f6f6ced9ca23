import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastTesting
import LocalPostgres
import Testing

@testable import LivecastServer

/// PostgreSQL goes down under a running server: requests and `/ready` are answered `503` instead of hanging, and
/// everything recovers by itself when it is back.
@Suite struct DatabaseOutageTests {
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
