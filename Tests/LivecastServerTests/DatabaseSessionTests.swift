import PostgresNIO
import Testing

/// The settings the service gives its own connections to PostgreSQL.
@Suite struct DatabaseSessionTests {
    /// The service compiles no plan just in time, where PostgreSQL's default would: the fixture's own client, opened
    /// on the same database without the service's settings, still has it on.
    @Test func theServicesConnectionsCompileNoPlanJustInTime() async throws {
        try await APIFixture.with("session_jit") { fixture, _ in
            let service = try await Self.setting("jit", of: fixture.database)
            let fixtures = try await Self.setting("jit", of: fixture.client)
            #expect(service == "off")
            #expect(fixtures == "on")
        }
    }

    /// PostgreSQL sends TCP keep-alive probes on the service's connections after a minute of silence, so that a
    /// connection that stays quiet for hours, such as a `LISTEN`'s, is not dropped by a firewall on the way; the
    /// fixture's own client, opened without the service's settings, has the system's defaults.
    @Test func postgreSQLProbesTheServicesIdleConnections() async throws {
        try await APIFixture.with("session_keepalives") { fixture, _ in
            let service = try await Self.keepAlives(fixture.database)
            let fixtures = try await Self.keepAlives(fixture.client)
            #expect(service == ["60", "10", "6"])
            #expect(fixtures != service)
        }
    }

    /// The service's connections are named `livecast`, so that an operator tells them apart in `pg_stat_activity`;
    /// the fixture's own client is not.
    @Test func theServicesConnectionsAreNamedLivecast() async throws {
        try await APIFixture.with("session_name") { fixture, _ in
            let service = try await Self.setting("application_name", of: fixture.database)
            let fixtures = try await Self.setting("application_name", of: fixture.client)
            #expect(service == "livecast")
            #expect(fixtures != "livecast")
        }
    }

    private static func keepAlives(_ client: PostgresClient) async throws -> [String] {
        let rows = try await client.query(
            "SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_interval'), current_setting('tcp_keepalives_count')"
        )
        for try await (idle, interval, count) in rows.decode((String, String, String).self) { return [idle, interval, count] }
        return []
    }

    /// The value of one of PostgreSQL's settings on a connection of `client`.
    private static func setting(_ name: String, of client: PostgresClient) async throws -> String? {
        for try await value in try await client.query("SELECT current_setting(\(name))").decode(String.self) { return value }
        return nil
    }
}
