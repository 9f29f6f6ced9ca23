import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// An app whose sending the invalidation guard held (InvalidationGuardTests trips it): shown on the app and on
/// `/ready`, and resumed by an admin.
@Suite struct SendingHoldRoutesTests {
    @Test func aHeldAppIsReportedAndResumedByAnAdmin() async throws {
        // /ready asks anew each time, so that it shows the resume at once.
        try await APIFixture.with("sending_hold_routes", configuration: .init(readinessLifetime: .zero)) { fixture, client in
            let app = "/v1/apps/com.example.game"
            try await fixture.client.query(
                "UPDATE apps SET sending_held_at = now(), sending_held_reason = '25 of 30 pushes in one batch were answered Unregistered' WHERE id = \(fixture.store.appID)"
            )
            let shown = try await client.send(.get, app, key: fixture.key(.admin))
            #expect(shown.json["sendingHeld"]?["reason"]?.stringValue == "25 of 30 pushes in one batch were answered Unregistered", "\(shown.text)")
            let ready = try await fixture.readyWithDetail()
            #expect(ready["detail"]?["sendingHeld"]?.stringValue?.hasPrefix("1 app(s) held by the invalidation guard") == true, "\(ready)")
            #expect(ready["detail"]?["sendingHeld"]?.stringValue?.contains("com.example.game") == false, "no bundle id")

            let byOperator = try await client.send(.post, "\(app)/sending:resume", key: fixture.key(.operator))
            #expect(byOperator.status == .forbidden)
            let resumed = try await client.send(.post, "\(app)/sending:resume", key: fixture.key(.admin))
            #expect(resumed.status == .ok, "\(resumed.text)")
            #expect(resumed.json["sendingHeld"] == nil)
            let again = try await client.send(.post, "\(app)/sending:resume", key: fixture.key(.admin))
            #expect(again.status == .conflict && again.errorCode == "conflict")
            let readyAfter = try await fixture.readyWithDetail()
            #expect(readyAfter["detail"]?["sendingHeld"] == nil, "\(readyAfter)")
        }
    }
}
