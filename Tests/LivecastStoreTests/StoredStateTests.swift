import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Each state enum is the one place a state column's values are spelled: its cases are exactly what the column's
/// `CHECK` allows, and each decodes from and binds to PostgreSQL as itself.
@Suite struct StoredStateTests {
    @Test func everyStateEnumHasExactlyTheValuesItsColumnAllows() async throws {
        let columns: [(table: String, column: String, cases: Set<String>)] = [
            ("activities", "state", Set(ActivityState.allCases.map(\.rawValue))),
            ("channels", "state", Set(ChannelState.allCases.map(\.rawValue))),
            ("feeds", "state", Set(FeedState.allCases.map(\.rawValue))),
            ("updates", "status", Set(OutboxStatus.allCases.map(\.rawValue))),
            ("scheduled_updates", "status", Set(ScheduledStatus.allCases.map(\.rawValue))),
            ("webhook_deliveries", "state", Set(WebhookDeliveryState.allCases.map(\.rawValue))),
            ("updates", "event", Set(LiveActivityEvent.allCases.map(\.rawValue))),
            ("owed_pushes", "target_kind", Set(OwedTarget.Kind.allCases.map(\.rawValue))),
            ("dead_letters", "replay_outcome", Set(DeadLetterReplay.Outcome.allCases.map(\.rawValue))),
            ("activities", "ended_by", Set(EndedBy.allCases.map(\.rawValue))),
            ("activities", "dismissed_by", Set(DismissedBy.allCases.map(\.rawValue))),
            ("queued_starts", "state", Set(QueuedStartState.allCases.map(\.rawValue))),
            ("queued_starts", "kind", Set(QueuedStartKind.allCases.map(\.rawValue))),
            ("apple_metrics_exports", "dataset", Set(AppleDataset.allCases.map(\.rawValue))),
            ("delivery_divergences", "subject_kind", Set(DivergenceSubject.allCases.map(\.rawValue))),
            ("livecast_daily_counts", "subject_kind", Set(DivergenceSubject.allCases.map(\.rawValue))),
            ("dead_letters", "target_kind", Set(DeadLetterTargetKind.allCases.map(\.rawValue))),
            ("deliveries", "target_kind", Set(DeliveryTargetKind.allCases.map(\.rawValue))),
            ("apps", "environment", Set(APNsEnvironment.known.map(\.rawValue))),
        ]
        try await StoreFixture.with("stored_states") { fixture in
            for (table, column, cases) in columns {
                let allowed = try await Self.allowed(fixture, table, column)
                #expect(allowed == cases, "\(table).\(column)")
            }
        }
    }

    @Test func aStateRoundTripsThroughABoundParameter() async throws {
        try await StoreFixture.with("stored_state_round_trip") { fixture in
            for state in ChannelState.allCases {
                let rows = try await fixture.client.query("SELECT \(state)::text")
                for try await decoded in rows.decode(ChannelState.self) { #expect(decoded == state) }
            }
            // The ones the API also encodes as JSON are bound as text too, not as PostgreSQL's jsonb.
            for event in LiveActivityEvent.allCases {
                let rows = try await fixture.client.query("SELECT \(event)::text, pg_typeof(\(event))::text")
                for try await (decoded, type) in rows.decode((LiveActivityEvent, String).self) { #expect(decoded == event && type == "text") }
            }
            for status in OutboxStatus.allCases {
                let rows = try await fixture.client.query("SELECT \(status)::text, pg_typeof(\(status))::text")
                for try await (decoded, type) in rows.decode((OutboxStatus, String).self) { #expect(decoded == status && type == "text") }
            }
            // An environment, a product's open struct, is bound and decoded as its name like the store's own states.
            for environment in APNsEnvironment.known {
                let rows = try await fixture.client.query("SELECT \(environment)::text, pg_typeof(\(environment))::text")
                for try await (decoded, type) in rows.decode((APNsEnvironment, String).self) { #expect(decoded == environment && type == "text") }
            }
            let outcome = try await fixture.client.query("SELECT pg_typeof(\(DeadLetterReplay.Outcome.targetGone))::text")
            for try await type in outcome.decode(String.self) { #expect(type == "text") }
            let unknown = try await fixture.client.query("SELECT 'paused'::text")
            await #expect(throws: (any Error).self) {
                for try await _ in unknown.decode(FeedState.self) {}
            }
        }
    }

    /// The values the `CHECK` constraint on `table.column` allows, read from the catalog.
    private static func allowed(_ fixture: StoreFixture, _ table: String, _ column: String) async throws -> Set<String> {
        let rows = try await fixture.client.query(
            """
            SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
            WHERE c.contype = 'c' AND c.conrelid = \(table)::regclass AND a.attname = \(column)
            """
        )
        var values = Set<String>()
        for try await definition in rows.decode(String.self) {
            // `CHECK ((state = ANY (ARRAY['created'::text, 'active'::text])))`: the quoted words.
            let parts = definition.split(separator: "'", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: parts.count, by: 2) { values.insert(String(parts[index])) }
        }
        return values
    }
}
