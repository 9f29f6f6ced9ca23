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

    private static func jit(_ client: PostgresClient) async throws -> String? {
        for try await value in try await client.query("SHOW jit").decode(String.self) { return value }
        return nil
    }
}
