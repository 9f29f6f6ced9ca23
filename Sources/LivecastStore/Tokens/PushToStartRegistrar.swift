import Logging
package import PostgresNIO

/// Writes the push-to-start registrations that arrive together in one statement and one transaction (group commit):
/// at a launch peak, PostgreSQL commits once for many registrations instead of once for each (``GroupCommit``). Each
/// caller gets its own registration's result or error (``PushToStartTokens/write(_:client:logger:)``).
package final class PushToStartRegistrar: Sendable {
    /// The most registrations one statement writes.
    package static let maximumBatch = 500

    private let commits: GroupCommit<PushToStartTokens.Registration, PushToStartTokens.Result>

    package init(client: PostgresClient, logger: Logger) {
        self.commits = GroupCommit(maximumBatch: Self.maximumBatch) { registrations in
            await PushToStartTokens.write(registrations, client: client, logger: logger)
        }
    }

    /// Registers a device's token with whatever other registrations are waiting (``PushToStartTokens/register(_:)``).
    /// - Throws: ``StoreError`` `invalid` for a token that is not hex, `deviceLimitReached` for a new attributes type
    ///   past the device's cap.
    package func register(_ registration: PushToStartTokens.Registration) async throws -> PushToStartTokens.Result {
        try await self.commits.submit(try registration.checked())
    }
}
