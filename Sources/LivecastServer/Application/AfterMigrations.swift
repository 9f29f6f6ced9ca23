import ServiceLifecycle

/// Runs services side by side once the migrations are applied, so that they never meet a schema that is not there
/// yet (a new database), and not at all when they fail or the server stops first.
struct AfterMigrations: Service {
    /// Finishes when the migrations are applied.
    let migrated: AsyncStream<Void>
    let services: [any Service]

    func run() async throws {
        await cancelWhenGracefulShutdown { for await _ in self.migrated {} }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await withThrowingDiscardingTaskGroup { group in
            for service in self.services {
                group.addTask { try await service.run() }
            }
        }
    }
}
