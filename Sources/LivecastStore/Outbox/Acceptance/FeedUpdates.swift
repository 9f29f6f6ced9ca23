import LivecastCore
import Logging
import PostgresNIO

/// Accepting a feed's updates and its end into the outbox: one row, which the dispatcher fans out to the feed's
/// channel (one broadcast) and to every activity that follows it with its own token.
package struct FeedUpdates: DatabaseBacked {
    /// An update or end a backend asks for.
    package typealias Request = UpdateRequest<FeedUpdates>

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Checks and stores an update or end of a feed.
    /// - Throws: ``StoreError``: `notFound` feed; `feedEnded`; `staleTimestamp`; `payloadTooLarge` with the measured
    ///   size (4,096 bytes while activities follow by token, else 5,120 for the channel); `invalid` for a start, a bad
    ///   priority or payload rule. Nothing is written when it throws.
    package func accept(_ request: Request) async throws -> AcceptedUpdate {
        guard request.content.event != .start else { throw StoreError(.invalid, "start a feed with FeedStarts", field: "event") }
        return try await UpdateAcceptance.accept(request, client: self.client, logger: self.logger) { [logger] connection in
            try await request.endedBy.declare(on: connection, logger: logger)
            return try await FeedTarget.lock(appID: request.appID, feedKey: request.targetKey, on: connection, logger: logger)
        }
    }
}
