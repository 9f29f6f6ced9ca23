/// Runs `body`, then `cleanup`, whether `body` throws or not: the stacks' teardown, which has to await.
func ensuring(_ body: () async throws -> Void, cleanup: () async -> Void) async throws {
    do {
        try await body()
    } catch {
        await cleanup()
        throw error
    }
    await cleanup()
}
