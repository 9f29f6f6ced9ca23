import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Bulk imports against a real PostgreSQL: every row ends as registering the rows one by one, in order, would leave it.
@Suite struct RegistrationImportTests {
    private func token(_ fixture: StoreFixture, _ device: String, _ token: String, user: String? = nil) -> PushToStartTokens.Registration {
        .init(appID: fixture.appID, deviceID: device, attributesType: "GameAttributes", token: token, userID: user)
    }

    @Test func tokenRowsCreateRefreshRotateAndAreRefusedOneByOne() async throws {
        try await StoreFixture.with("import_tokens") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.token(fixture, "kept", "a0"))
            _ = try await tokens.register(self.token(fixture, "rotating", "b0"))
            _ = try await tokens.register(self.token(fixture, "holder", "c0"))
            let outcomes = try await tokens.importRegistrations([
                self.token(fixture, "new", "A1", user: "u1"),
                self.token(fixture, "kept", "a0", user: "u2"),
                self.token(fixture, "rotating", "b1"),
                self.token(fixture, "thief", "c0"),
                self.token(fixture, "bad", "xyz"),
                self.token(fixture, "twice", "d1"),
                self.token(fixture, "twice", "d2"),
            ])
            #expect(
                outcomes == [
                    .registered(.created), .registered(.unchanged), .registered(.rotated),
                    .registered(.moved),
                    .refused(StoreError(.invalid, "the token must be hex: an even number of 2 to 200 digits", field: "token")),
                    .registered(.created), .registered(.rotated),
                ]
            )
            #expect(try await fixture.rows(device: "new").map(\.token) == ["a1"])
            #expect(
                try await fixture.rows(device: "rotating").map { "\($0.token) \($0.live) \($0.reason ?? "-")" } == ["b0 false rotated", "b1 true -"]
            )
            #expect(try await fixture.rows(device: "twice").map { "\($0.token) \($0.live)" } == ["d1 false", "d2 true"])
            #expect(try await fixture.rows(device: "thief").map { "\($0.token) \($0.live)" } == ["c0 true"], "holding the token is the proof")
            #expect(try await fixture.rows(device: "holder").isEmpty, "its row moved")
            #expect(try await fixture.rows(device: "bad").isEmpty)
            let users = try await fixture.client.query("SELECT user_id FROM push_to_start_tokens WHERE device_id = 'kept'")
            for try await user in users.decode(String?.self) { #expect(user == "u2", "an unchanged row's details are refreshed") }
        }
    }

    @Test func aTokenMovesBetweenDevicesOnlyInTheRowsOrder() async throws {
        try await StoreFixture.with("import_token_order") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.token(fixture, "old-phone", "e0"))
            // The old phone gives up e0 first, so the new phone may take it.
            let inOrder = try await tokens.importRegistrations([self.token(fixture, "old-phone", "e1"), self.token(fixture, "new-phone", "e0")])
            #expect(inOrder == [.registered(.rotated), .registered(.created)])
            #expect(try await fixture.rows(device: "new-phone").map { "\($0.token) \($0.live)" } == ["e0 true"])
            // The other way round, e1 moves to the third phone first (its row goes with it), and the old phone's next row
            // is a new token for a device that holds none.
            let reversed = try await tokens.importRegistrations([self.token(fixture, "third-phone", "e1"), self.token(fixture, "old-phone", "e2")])
            #expect(reversed == [.registered(.moved), .registered(.created)])
            #expect(try await fixture.rows(device: "third-phone").map { "\($0.token) \($0.live)" } == ["e1 true"])
            #expect(try await fixture.rows(device: "old-phone").map { "\($0.token) \($0.live)" } == ["e2 true"])
        }
    }

    @Test func manyRowsAreWrittenInChunks() async throws {
        try await StoreFixture.with("import_chunks") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            let count = RegistrationImport.chunkSize * 2 + 7
            let rows = (0..<count).map { self.token(fixture, "device-\($0)", String(format: "%08x", $0)) }
            let outcomes = try await tokens.importRegistrations(rows)
            #expect(outcomes.allSatisfy { $0 == .registered(.created) })
            let again = try await tokens.importRegistrations(rows)
            #expect(again.allSatisfy { $0 == .registered(.unchanged) })
            let live = try await fixture.client.query("SELECT count(*)::int FROM push_to_start_tokens WHERE invalidated_at IS NULL")
            for try await live in live.decode(Int.self) { #expect(live == count) }
        }
    }

    @Test func activityRowsAreRegisteredAsOneByOne() async throws {
        try await StoreFixture.with("import_activities") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            func activity(
                _ key: String,
                token: String? = nil,
                type: String = "GameAttributes",
                feed: String? = nil,
                channel: String? = nil,
                device: String? = nil
            )
                -> Activities.Registration
            {
                .init(
                    appID: fixture.appID,
                    activityKey: key,
                    attributesType: type,
                    feedKey: feed,
                    pushToken: token,
                    channelID: channel,
                    deviceID: device
                )
            }
            _ = try await activities.register(activity("known", token: "f0", device: "d0"))
            _ = try await activities.register(activity("ended"))
            _ = try await activities.endedByDevice(appID: fixture.appID, activityKey: "ended")
            let outcomes = try await activities.importRegistrations([
                activity("new", token: "F1", device: "d1"),
                activity("waiting"),
                activity("known", device: "d9"),
                activity("known-again", token: "f0"),
                activity("ended", token: "f2"),
                activity("no-feed", feed: "nope"),
                activity("both", token: "f3", channel: "c"),
                activity("twice", token: "f4"),
                activity("twice", token: "f5"),
                activity("new-type", type: "Other", device: "d1"),
            ])
            #expect(
                outcomes == [
                    .registered(.created), .registered(.created), .registered(.unchanged),
                    .refused(StoreError(.conflict, "another activity holds this token", field: "pushToken")),
                    .refused(StoreError(.conflict, "the activity has ended", field: "activityId")),
                    .refused(StoreError(.notFound, "no feed nope", field: "feed")),
                    .refused(StoreError(.invalid, "an activity is token-based or channel-based, not both", field: "channelId")),
                    .registered(.created), .registered(.tokenRotated), .registered(.created),
                ]
            )
            let rows = try await fixture.client.query(
                """
                SELECT a.activity_key, a.state, coalesce(a.device_id, '-'), coalesce(string_agg(t.token || ':' || t.generation || ':' || (t.invalidated_at IS NULL), ',' ORDER BY t.generation), '-')
                FROM activities a LEFT JOIN activity_tokens t ON t.activity_id = a.id GROUP BY a.id ORDER BY a.activity_key
                """
            )
            var found: [String] = []
            for try await (key, state, device, tokens) in rows.decode((String, String, String, String).self) {
                found.append("\(key) \(state) \(device) \(tokens)")
            }
            #expect(
                found == [
                    "ended ended - -", "known active d9 f0:1:true", "new active d1 f1:1:true", "new-type starting d1 -",
                    "twice active - f4:1:false,f5:2:true", "waiting starting - -",
                ]
            )
        }
    }

    /// An import looks each key up through its unique index, however the planner would price joining the keys with the
    /// table: with nested loops turned off (so that such a join reads every stored row), importing 1,000 tokens and
    /// 1,000 activities with tokens beside 20,000 of each stored reads none of the stored rows, since none of their
    /// keys is there. The one read left is each new activity token's foreign key check of its new activity.
    @Test func anImportReadsOnlyTheRowsItsKeysFind() async throws {
        try await StoreFixture.with("import_probes") { fixture in
            let tables = ["push_to_start_tokens", "activities", "activity_tokens"]
            // Each client's connections close when it ends, and their backends then report what they read and wrote.
            try await TestPostgres.withClient(fixture.configuration) { client in
                try await client.query(
                    """
                    WITH tokens AS (
                        INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token)
                        SELECT \(fixture.appID), 'stored-' || g, 'GameAttributes', lpad(to_hex(g), 8, '0') FROM generate_series(1, 20000) g
                    ), activities AS (
                        INSERT INTO activities (app_id, activity_key, attributes_type)
                        SELECT \(fixture.appID), 'stored-' || g, 'GameAttributes' FROM generate_series(1, 20000) g RETURNING id
                    )
                    INSERT INTO activity_tokens (app_id, activity_id, token, generation)
                    SELECT \(fixture.appID), id, lpad(to_hex(id), 8, '0'), 1 FROM activities
                    """
                )
                try await client.query("ANALYZE push_to_start_tokens, activities, activity_tokens")
            }
            let before = try await self.counts(of: tables, fixture) { _, counts in counts.inserted >= 20000 }
            var withoutNestedLoops = fixture.configuration
            withoutNestedLoops.options.additionalStartupParameters.append(("enable_nestloop", "off"))
            try await TestPostgres.withClient(withoutNestedLoops) { client in
                let tokens = try await PushToStartTokens(client: client, logger: fixture.logger).importRegistrations(
                    (0..<1000).map { self.token(fixture, "imported-\($0)", String(format: "%08x", 1_000_000 + $0)) }
                )
                #expect(tokens.allSatisfy { $0 == .registered(.created) })
                let activities = try await Activities(client: client, logger: fixture.logger).importRegistrations(
                    (0..<1000).map {
                        .init(
                            appID: fixture.appID,
                            activityKey: "imported-\($0)",
                            attributesType: "GameAttributes",
                            pushToken: String(format: "%08x", 1_000_000 + $0)
                        )
                    }
                )
                #expect(activities.allSatisfy { $0 == .registered(.created) })
            }
            let after = try await self.counts(of: tables, fixture) { table, counts in counts.inserted >= before[table]!.inserted + 1000 }
            let read = Dictionary(uniqueKeysWithValues: tables.map { ($0, after[$0]!.read - before[$0]!.read) })
            #expect(read == ["push_to_start_tokens": 0, "activities": 1000, "activity_tokens": 0], "rows read by the imports")
        }
    }

    /// An import into a new database analyzes the table once a chunk has filled it (`analyze_if_outgrown`), so that
    /// the next chunk's look-ups go through the right index. Without statistics the planner took
    /// push_to_start_tokens_last_seen for them, reading the app's every stored token for each row of the second
    /// chunk: 5,000 × 5,000 rows here.
    @Test func anImportIntoANewDatabaseReadsNoneOfTheRowsItWrote() async throws {
        try await StoreFixture.with("import_unanalyzed") { fixture in
            // The import's own ANALYZE is what is tested: autovacuum's could come meanwhile.
            try await fixture.client.query("ALTER TABLE push_to_start_tokens SET (autovacuum_enabled = false)")
            let count = RegistrationImport.chunkSize * 2
            try await TestPostgres.withClient(fixture.configuration) { client in
                let outcomes = try await PushToStartTokens(client: client, logger: fixture.logger).importRegistrations(
                    (0..<count).map { self.token(fixture, "new-\($0)", String(format: "%08x", $0)) }
                )
                #expect(outcomes.allSatisfy { $0 == .registered(.created) })
            }
            let counts = try await self.counts(of: ["push_to_start_tokens"], fixture) { _, counts in counts.inserted >= count }
            #expect(counts["push_to_start_tokens"]?.inserted == count)
            #expect(counts["push_to_start_tokens"]?.read == 0, "rows read by the import")
            #expect(try await fixture.timesAnalyzed("push_to_start_tokens") == 1, "analyzed after the first chunk only")
        }
    }

    /// An import of activities into a new database analyzes their tables too once a chunk has filled them: a feed's
    /// first fan-out after 20,000 followers were imported read each page on plans made for empty tables, 43.6 s in all
    /// against 2.8 s once analyzed.
    @Test func anActivityImportIntoANewDatabaseAnalyzesItsTables() async throws {
        try await StoreFixture.with("import_activities_unanalyzed") { fixture in
            // The import's own ANALYZE is what is tested: autovacuum's could come meanwhile.
            try await fixture.client.query("ALTER TABLE activities SET (autovacuum_enabled = false)")
            try await fixture.client.query("ALTER TABLE activity_tokens SET (autovacuum_enabled = false)")
            let count = RegistrationImport.chunkSize * 2
            let outcomes = try await Activities(client: fixture.client, logger: fixture.logger).importRegistrations(
                (0..<count).map {
                    .init(appID: fixture.appID, activityKey: "new-\($0)", attributesType: "GameAttributes", pushToken: String(format: "%08x", $0))
                }
            )
            #expect(outcomes.allSatisfy { $0 == .registered(.created) })
            #expect(try await fixture.timesAnalyzed("activities") == 1, "analyzed after the first chunk only")
            #expect(try await fixture.timesAnalyzed("activity_tokens") == 1, "analyzed after the first chunk only")
        }
    }

    /// The rows each table has had read (by sequential scans and fetched through indexes) and inserted, by
    /// PostgreSQL's statistics, once `reported` holds for every table (a backend reports its counts a moment after it
    /// ends), or after ten seconds.
    private func counts(
        of tables: [String],
        _ fixture: StoreFixture,
        once reported: (String, (read: Int, inserted: Int)) -> Bool
    ) async throws -> [String: (read: Int, inserted: Int)] {
        var counts: [String: (read: Int, inserted: Int)] = [:]
        for _ in 0..<100 {
            let rows = try await fixture.client.query(
                """
                SELECT relname::text, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int, n_tup_ins::int
                FROM pg_stat_user_tables WHERE relname = ANY(\(tables))
                """
            )
            for try await (table, read, inserted) in rows.decode((String, Int, Int).self) { counts[table] = (read, inserted) }
            if tables.allSatisfy({ table in counts[table].map { reported(table, $0) } ?? false }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return counts
    }
}
