import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The reaper's prune step forgets client devices gone for longer than the token expiry (#66 §4): `client_devices`
/// would otherwise keep a row for every device id a stranger ever made up.
@Suite struct ClientDevicePruningTests {
    @Test func clientDevicesGoneForLongerThanTheTokenExpiryArePruned() async throws {
        try await DispatchFixture.with("reap_client_devices") { fixture in
            let appID = fixture.store.appID
            // Admitted 40 days ago: one gone (nothing live), one with a live token, one with a running activity; and
            // one admitted yesterday with nothing live.
            try await fixture.sql(
                """
                INSERT INTO client_devices (app_id, device_id, first_seen_at) VALUES
                    (\(appID), 'gone', now() - interval '40 days'), (\(appID), 'with-token', now() - interval '40 days'),
                    (\(appID), 'with-activity', now() - interval '40 days'), (\(appID), 'recent', now() - interval '1 day')
                """
            )
            _ = try await PushToStartTokens(client: fixture.store.client, logger: fixture.store.logger).register(
                .init(appID: appID, deviceID: "with-token", attributesType: "GameAttributes", token: "aa01")
            )
            _ = try await Activities(client: fixture.store.client, logger: fixture.store.logger).register(
                .init(appID: appID, activityKey: "a1", attributesType: "GameAttributes", deviceID: "with-activity")
            )
            try await fixture.sql(
                "INSERT INTO client_buckets (app_id, key, tokens, updated_at, full_at) VALUES (\(appID), 'device:gone', 0, now() - interval '2 hours', now() - interval '1 hour')"
            )
            #expect(try await fixture.reaper().pass(dryRun: true).map(\.prunedRows) == [1])
            #expect(try await fixture.number("SELECT count(*)::int FROM client_devices") == 4, "a dry run deletes nothing")
            #expect(try await fixture.reaper().pass().map(\.prunedRows) == [1])
            #expect(try await fixture.number("SELECT count(*)::int FROM client_devices WHERE device_id = 'gone'") == 0)
            #expect(try await fixture.number("SELECT count(*)::int FROM client_devices") == 3)
            #expect(try await fixture.number("SELECT count(*)::int FROM client_buckets") == 0, "a full bucket's row goes too")
        }
    }
}
