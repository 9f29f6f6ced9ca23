package import LivecastCore
import Logging
package import PostgresNIO

/// Accepting a feed's updates and its end into the outbox: one row, which the dispatcher fans out to the feed's
/// channel (one broadcast) and to every activity that follows it with its own token.
package struct FeedUpdates: Sendable {
    /// An update or end a backend asks for. Without a `staleDate`, an update gets the timestamp plus the feed's
    /// `staleAfterSeconds`, when it has one.
    package struct Request: Sendable, Hashable {
        package var appID: Int64
        package var feedKey: String
        package var content: UpdateContent

        package init(appID: Int64, feedKey: String, content: UpdateContent) {
            self.appID = appID
            self.feedKey = feedKey
            self.content = content
        }

        package init(appID: Int64, feedKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
            self.init(appID: appID, feedKey: feedKey, content: UpdateContent(event: event, contentState: contentState, timestamp: timestamp))
        }
    }

    private let client: PostgresClient
    private let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Checks and stores an update or end of a feed.
    /// - Throws: ``StoreError``: `notFound` feed; `feedEnded`; `staleTimestamp`; `payloadTooLarge` with the measured
    ///   size (4,096 bytes while activities follow by token, else 5,120 for the channel); `invalid` for a start, a bad
    ///   priority or payload rule. Nothing is written when it throws.
    package func accept(_ request: Request) async throws -> AcceptedUpdate {
        guard request.content.event != .start else { throw StoreError(.invalid, "start a feed with FeedStarts", field: "event") }
        return try await UpdateAcceptance.accept(request.content, appID: request.appID, client: self.client, logger: self.logger) {
            [logger] connection in
            try await FeedTarget.lock(appID: request.appID, feedKey: request.feedKey, on: connection, logger: logger)
        }
    }
}
