import LivecastCore
import Logging
package import PostgresNIO

/// Accepts standalone activities' updates and ends as ``ActivityUpdates/accept(_:)`` does, those that arrive
/// together in shared transactions (``GroupCommit``, ``ActivityUpdateBatch``): a backend posting to thousands of
/// activities at once costs PostgreSQL a few statements per batch instead of several per update.
///
/// A request with an idempotency key goes in a batch too, which replays its first answer when it was sent before. A
/// request whose shared transaction failed as a whole goes alone. A request whose task is cancelled (answered 503 by the server's database watch) before its
/// update is written withdraws it.
package final class ActivityUpdateQueue: Sendable {
    /// The most updates one transaction accepts.
    package static let maximumBatch = 200

    private let client: PostgresClient
    private let logger: Logger
    private let commits: GroupCommit<ActivityUpdates.Request, AcceptedUpdate>

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
        self.commits = GroupCommit(maximumBatch: Self.maximumBatch) { requests in
            await ActivityUpdateBatch.write(requests, client: client, logger: logger)
        }
    }

    /// Checks and stores an update or end, durably before it returns.
    /// - Throws: What ``ActivityUpdates/accept(_:)`` throws.
    package func accept(_ request: ActivityUpdates.Request) async throws -> AcceptedUpdate {
        guard request.content.event != .start else { throw ActivityUpdates.startRefused }
        _ = try OutboxRules.priority(requested: request.content.priority, hasAlert: request.content.alert != nil)
        do {
            return try await self.commits.submit(request)
        } catch is ActivityUpdateBatch.WriteAlone {
            // Its shared transaction failed as a whole: alone, unless the request has been given up meanwhile.
            try Task.checkCancellation()
            return try await ActivityUpdates(client: self.client, logger: self.logger).accept(request)
        }
    }
}
