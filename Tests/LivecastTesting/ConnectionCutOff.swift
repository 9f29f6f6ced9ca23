import PostgresNIO

extension PostgresClient {
    /// Makes PostgreSQL end the connection that writes a matching row, as a server going away mid-statement would: a
    /// trigger `name`, fired `event` (`BEFORE INSERT ON push_to_start_tokens`, say) for each row where `condition`
    /// holds, terminates its own backend. `DROP TRIGGER name ON …` lifts it.
    package func cutOffConnections(named name: String, _ event: String, when condition: String) async throws {
        try await self.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN
                        PERFORM pg_terminate_backend(pg_backend_pid());
                        RETURN NEW;
                    END $$
                    """
            )
        )
        try await self.query(
            PostgresQuery(unsafeSQL: "CREATE TRIGGER \(name) \(event) FOR EACH ROW WHEN (\(condition)) EXECUTE FUNCTION \(name)()")
        )
    }
}
