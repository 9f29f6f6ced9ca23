import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// `/health`, `/ready`, and `/metrics` on its own listener.
@Suite struct OperationsTests {
    @Test func healthAndReadinessNeedNoKey() async throws {
        try await APIFixture.with("ops_health") { _, client in
            let health = try await client.send(.get, "/health", key: nil)
            #expect(health.status == .ok)
            #expect(health.json["status"]?.stringValue == "ok")
            let ready = try await client.send(.get, "/ready", key: nil)
            #expect(ready.status == .ok, "\(ready.text)")
            #expect(ready.json["checks"]?["database"]?.stringValue == "ok")
            #expect(ready.json["checks"]?["migrations"]?.stringValue == "ok")
        }
    }

    @Test func appsWhoseSigningKeyCannotBeOpenedAreCountedWithoutTakingTheInstanceOutOfService() async throws {
        // Both of the fixture's apps read their keys from files that do not exist.
        try await APIFixture.with("ops_unusable_keys", testing: .live) { fixture, client in
            var detailed = try await fixture.readyWithDetail()
            let deadline = ContinuousClock.now + .seconds(10)
            // The dispatcher may find one app's key before the start-up report has counted both.
            while detailed["detail"]?["signingKeys"]?.stringValue?.hasPrefix("2 ") != true, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                detailed = try await fixture.readyWithDetail()
            }
            let detail = detailed["detail"]?["signingKeys"]?.stringValue ?? ""
            #expect(detail.hasPrefix("2 app(s) have a signing key that cannot be opened"), "\(detailed)")
            #expect(!detail.contains("com.example"), "a tenant's bundle id is shown")
            // The API's open /ready stays ready, and tells no one how many apps have trouble.
            let ready = try await client.send(.get, "/ready", key: nil)
            #expect(ready.status == .ok, "\(ready.text)")
            #expect(ready.json["detail"] == nil, "\(ready.text)")
        }
    }

    @Test(arguments: [true, false]) func theOpenReadinessAnswerIsKeptForItsLifetime(kept: Bool) async throws {
        // Kept for a minute, /ready answers as before though a migration's row is renamed away meanwhile; kept for no
        // time, it asks PostgreSQL anew and is not ready.
        let configuration = LivecastAPI.Configuration(readinessLifetime: kept ? .seconds(60) : .zero)
        try await APIFixture.with("ops_ready_cache_\(kept)", configuration: configuration) { fixture, client in
            #expect(try await client.send(.get, "/ready", key: nil).status == .ok)
            try await fixture.client.query("UPDATE livecast_migrations SET name = name || '.away' WHERE name = '0002_update_payloads.sql'")
            let again = try await client.send(.get, "/ready", key: nil)
            #expect(again.status == (kept ? .ok : .serviceUnavailable), "\(again.text)")
        }
    }

    @Test func notReadyWhileAMigrationIsMissingOrTheDispatcherIsDown() async throws {
        try await APIFixture.with("ops_not_ready") { fixture, client in
            try await fixture.client.query("DELETE FROM livecast_migrations WHERE name = '0002_update_payloads.sql'")
            let ready = try await client.send(.get, "/ready", key: nil)
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.json["checks"]?["migrations"]?.stringValue == "not applied: 0002_update_payloads.sql")
        }
    }

    @Test func metricsCountRequestsByRouteTemplateAndStatus() async throws {
        try await APIFixture.with("ops_metrics") { fixture, client in
            _ = try await client.send(.get, "/v1/apps/com.example.game/updates/1", key: fixture.key(.backend))
            _ = try await client.send(.get, "/health", key: nil)
            let metrics = try await fixture.scrapeMetrics()
            #expect(metrics.status == "200")
            #expect(
                metrics.text.contains(#"livecast_http_requests_total{route="/v1/apps/{bundleId}/updates/{updateId}",method="GET",status="404"} 1"#),
                "\(metrics.text)"
            )
            #expect(metrics.text.contains(#"livecast_http_requests_total{route="/health",method="GET",status="200"} 1"#))
            #expect(metrics.text.contains("livecast_http_request_duration_seconds_bucket"))
        }
    }

    @Test func metricsAreServedOnTheirOwnListenerAndNotOnTheAPIs() async throws {
        try await APIFixture.with("ops_metrics_listener") { fixture, client in
            let onAPI = try await client.send(.get, "/metrics", key: nil)
            #expect(onAPI.status == .notFound)
            #expect(onAPI.errorCode == "not_found")
            #expect(!onAPI.text.contains("livecast_http_requests_total"))
            let metrics = try await fixture.scrapeMetrics()
            #expect(metrics.status == "200")
            #expect(metrics.text.contains("# TYPE livecast_http_requests_total counter"), "\(metrics.text)")
            // The metrics listener serves nothing of the API.
            let port = try #require(fixture.metricsPort.port)
            let health = try await ExternalProcess.run("curl", ["-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)/health"])
            #expect(health.stdout.hasSuffix("\n404"), "\(health.stdout)")
        }
    }

    @Test func priorityDowngradesAreCounted() async throws {
        try await APIFixture.with("ops_downgrades") { fixture, client in
            let key = fixture.key(.backend)
            try await fixture.client.query("UPDATE apps SET priority10_hourly_cap = 1 WHERE bundle_id = 'com.example.game'")
            let activity = "/v1/apps/com.example.game/activities/a1"
            #expect(
                try await client.send(.put, activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            // The cap counts a clock hour's pushes: three updates that straddle the hour's end would each be the
            // first of an hour. Close to the end, start after it.
            let secondsLeftInTheHour = 3600 - Int(Date().timeIntervalSince1970) % 3600
            if secondsLeftInTheHour < 30 { try await Task.sleep(for: .seconds(secondsLeftInTheHour + 1)) }
            let now = Int(Date().timeIntervalSince1970)
            for (offset, downgraded) in [(0, false), (1, true), (2, true)] {
                let body = #"{"contentState": {"home": \#(offset)}, "timestamp": \#(now - 10 + offset), "priority": 10}"#
                let accepted = try await client.send(.post, "\(activity)/updates", key: key, body: body)
                #expect(accepted.json["priority"]?.intValue == (downgraded ? 5 : 10), "\(accepted.text)")
            }
            let metrics = try await fixture.scrapeMetrics()
            #expect(metrics.text.contains("livecast_priority_downgrades_total 2"), "\(metrics.text)")
        }
    }
}
