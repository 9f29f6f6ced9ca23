import Foundation
import Hummingbird
import HummingbirdTesting
import LivecastTesting
import LocalPostgres
import Testing

@testable import LivecastServer

/// PostgreSQL stops answering under a running server: requests and `/ready` are answered `503` at once instead of
/// hanging, and everything recovers by itself when it answers again.
@Suite struct DatabaseOutageTests {
    @Test(.timeLimit(.minutes(3))) func whilePostgreSQLIsFrozenRequestsGet503FastAndTheServerRecovers() async throws {
        let postgres = try await TemporaryPostgres.start()
        do {
            try await APIFixture.with("outage", testing: .live, server: postgres.configuration) { fixture, client in
                let path = "/v1/apps/com.example.game/updates/1"
                let key = fixture.key(.backend)
                #expect(try await client.send(.get, path, key: key).status == .notFound)

                // Every process of the cluster stops (SIGSTOP): connections stay open and nothing answers, the
                // worst kind of outage for a client.
                try await Self.signal("STOP", postgres)
                var started = ContinuousClock.now
                let refused = try await client.send(.get, path, key: key)
                let waited = ContinuousClock.now - started
                #expect(refused.status == .serviceUnavailable, "\(refused.text)")
                #expect(refused.errorCode == "database_unavailable")
                #expect(refused.headers[.retryAfter] == "5")
                #expect(waited < .seconds(5), "answered after \(waited)")
                let write = try await client.send(
                    .put,
                    "/v1/apps/com.example.game/feeds/game-1",
                    key: fixture.key(.operator),
                    body: #"{"attributesType": "A"}"#
                )
                #expect(write.status == .serviceUnavailable)
                started = ContinuousClock.now
                let ready = try await client.send(.get, "/ready", key: nil)
                #expect(ready.status == .serviceUnavailable)
                #expect(ready.json["checks"]?["database"]?.stringValue == "unreachable")
                #expect(ContinuousClock.now - started < .seconds(1))
                #expect(try await client.send(.get, "/health", key: nil).status == .ok)

                // It answers again: so does the API, without a restart.
                try await Self.signal("CONT", postgres)
                let deadline = ContinuousClock.now + .seconds(30)
                var status = refused.status
                while status != .notFound, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    status = try await client.send(.get, path, key: key).status
                }
                #expect(status == .notFound)
                #expect(try await client.send(.get, "/ready", key: nil).status == .ok)
            }
        } catch {
            try? await Self.signal("CONT", postgres)
            await postgres.stop()
            throw error
        }
        await postgres.stop()
    }

    /// Sends `SIG<name>` to the cluster's postmaster and every process it started.
    private static func signal(_ name: String, _ postgres: TemporaryPostgres) async throws {
        let children = try await ExternalProcess.run("pkill", ["-\(name)", "-P", "\(postgres.processID)"])
        #expect(children.status == 0, "pkill: \(children.stderr)")
        let postmaster = try await ExternalProcess.run("kill", ["-\(name)", "\(postgres.processID)"])
        #expect(postmaster.status == 0, "kill: \(postmaster.stderr)")
    }
}
