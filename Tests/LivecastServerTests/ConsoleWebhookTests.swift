import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// The console's read-only webhooks page: each endpoint with its events, state and how its deliveries go, for an
/// operator; a backend key is refused as the API refuses it.
@Suite struct ConsoleWebhookTests {
    @Test func theWebhooksPageShowsEachEndpointsDeliveryState() async throws {
        try await APIFixture.with("console_webhooks", settings: { $0.masterKey = .random() }) { fixture, client in
            var operatorUser = ConsoleUser(client: client)
            try await operatorUser.signIn(key: fixture.key(.operator))
            let empty = try await operatorUser.get("/console/webhooks")
            #expect(empty.status == .ok && empty.text.contains("No webhook endpoints"), "\(empty.text)")
            #expect(empty.text.contains(#"href="/console/webhooks" aria-current="page""#))

            let id = try await fixture.createWebhook(client, #"{"url": "https://hooks.example.com/livecast", "events": ["sending.held"]}"#)
            let quiet = try await fixture.createWebhook(client, #"{"url": "https://quiet.example.com/"}"#)
            _ = try await client.send(
                .patch,
                "/v1/apps/com.example.game/webhooks/\(quiet)",
                key: fixture.key(.operator),
                body: #"{"enabled": false}"#
            )
            try await fixture.holdSending(true)
            try await fixture.client.query(
                """
                UPDATE webhook_endpoints SET consecutive_failures = 3, last_failure_at = now(), last_failure = 'HTTP 502 from the receiver',
                    last_success_at = now() - interval '1 hour'
                WHERE id = \(UUID(uuidString: id)!)
                """
            )

            let page = try await operatorUser.get("/console/webhooks")
            #expect(page.status == .ok, "\(page.text)")
            let row = try #require(Self.row(id, in: page.text), "\(page.text)")
            #expect(row.contains("https://hooks.example.com/livecast") && row.contains("sending.held") && row.contains("enabled"))
            #expect(row.contains("<td>1</td>") && row.contains(" s</td>"), "one pending, its age: \(row)")
            #expect(row.contains("<td>3</td>") && row.contains("HTTP 502 from the receiver") && row.contains("<time datetime="), "\(row)")
            let quietRow = try #require(Self.row(quiet, in: page.text))
            #expect(quietRow.contains("disabled") && quietRow.contains("all events") && quietRow.contains("never"), "\(quietRow)")
            #expect(!page.text.contains("whsec_"))

            var backend = ConsoleUser(client: client)
            try await backend.signIn(key: fixture.key(.backend))
            let refused = try await backend.get("/console/webhooks")
            #expect(refused.status == .forbidden && refused.text.contains("operator"), "\(refused.text)")
            let backendHome = try await backend.get("/console")
            #expect(backendHome.text.contains(#"href="/console/feeds""#) && !backendHome.text.contains(#"href="/console/webhooks""#))
        }
    }

    /// The table row of an endpoint.
    private static func row(_ id: String, in html: String) -> String? {
        guard let start = html.range(of: #"<tr id="webhook-\#(id)">"#) else { return nil }
        guard let end = html[start.upperBound...].range(of: "</tr>") else { return nil }
        return String(html[start.lowerBound..<end.upperBound])
    }
}
