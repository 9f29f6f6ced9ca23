import PostgresNIO
import Testing

/// The settings the service gives its own connections to PostgreSQL.
@Suite struct DatabaseSessionTests {
    /// The service compiles no plan just in time, where PostgreSQL's default would: the fixture's own client, opened
    /// on the same database without the service's settings, still has it on.
    @Test func theServicesConnectionsCompileNoPlanJustInTime() async throws {
        try await APIFixture.with("session_jit") { fixture, _ in
            let service = try await Self.jit(fixture.database)
            let fixtures = try await Self.jit(fixture.client)
            #expect(service == "off")
            #expect(fixtures == "on")
        }
    }

    /// PostgreSQL sends TCP keep-alive probes on the service's connections after a minute of silence, so that a
    /// connection kept open through a quiet hour is not dropped by a firewall on the way; the fixture's own client,
    /// opened without the service's settings, has the system's defaults.
    @Test func postgreSQLProbesTheServicesIdleConnections() async throws {
        try await APIFixture.with("session_keepalives") { fixture, _ in
            let service = try await Self.keepAlives(fixture.database)
            let fixtures = try await Self.keepAlives(fixture.client)
            #expect(service == ["60", "10", "6"])
            #expect(fixtures != service)
        }
    }

    /// The service keeps four connections open (and one for each dispatcher worker; the fixture runs none) after the
    /// work that opened more has ended and they have sat idle past the pool's idle timeout, here a second: only the
    /// connections opened beyond them are closed. A lease of a kept connection sets no idle timer.
    @Test func theServiceKeepsItsConnectionsOpenWhenIdle() async throws {
        try await APIFixture.with("session_kept", settings: { $0.database.options.connectionIdleTimeout = .seconds(1) }) { fixture, _ in
            let database = fixture.database
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { try await database.query("SELECT pg_sleep(0.5)") } }
                try await group.waitForAll()
            }
            let opened = try await Self.serviceConnections(fixture.client)
            var open = opened
            // The database watch's own connection may be open too: it probes twice a second.
            let deadline = ContinuousClock.now + .seconds(30)
            while open > 5, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                open = try await Self.serviceConnections(fixture.client)
            }
            #expect(opened > 5)
            #expect((4...5).contains(open), "\(open) of the service's \(opened) connections open after idling")
        }
    }

    private static func keepAlives(_ client: PostgresClient) async throws -> [String] {
        let rows = try await client.query(
            "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'), current_setting('tcp_keepalives_count')"
        )
        for try await (idle, interval, count) in rows.decode((String, String, String).self) { return [idle, interval, count] }
        return []
    }

    /// The open connections to this database named as the service names its own.
    private static func serviceConnections(_ client: PostgresClient) async throws -> Int {
        let rows = try await client.query(
            "SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'livecast'"
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    private static func jit(_ client: PostgresClient) async throws -> String? {
        for try await value in try await client.query("SHOW jit").decode(String.self) { return value }
        return nil
    }
}
