import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Accepting updates and ends for one standalone activity into the outbox, with the ordering and lifecycle
/// rules (docs/ARCHITECTURE.md, invariants 1 and 2) checked in the same transaction that stores the update.
package struct ActivityUpdates: DatabaseBacked {
    /// An update or end a backend asks for.
    package typealias Request = UpdateRequest<ActivityUpdates>

    /// What a start sent to an activity's own update token is told.
    static let startRefused = StoreError(.invalid, "an activity's own update token cannot start it", field: "event")

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Checks and stores an update or end.
    /// - Throws: ``StoreError``: `notFound` activity; `activityEnded`; `channelRetired` for a channel-based activity
    ///   whose channel is retired; `staleTimestamp` for a timestamp older than the last accepted; `payloadTooLarge`
    ///   with the measured size; `invalid` for a start, a bad priority or payload rule (naming the field). Nothing is
    ///   written when it throws.
    package func accept(_ request: Request) async throws -> AcceptedUpdate {
        guard request.content.event != .start else { throw Self.startRefused }
        return try await UpdateAcceptance.accept(request, client: self.client, logger: self.logger) { [logger] connection in
            try await request.endedBy.declare(on: connection, logger: logger)
            return try await ActivityTarget.lock(
                appID: request.appID,
                activityKey: request.targetKey,
                asFollower: false,
                on: connection,
                logger: logger
            )
        }
    }

    /// Ends one token-based activity that follows a feed, on its own token and with the feed's content state, while
    /// the feed goes on for the others (the reaper ends followers nearing ActivityKit's 8-hour limit this way, and its
    /// `activity.ended` event says `lifetime`). Its
    /// timestamp comes after both the feed's and the activity's last, so it is the last push the device applies.
    /// - Parameters:
    ///   - dismissalDate: UNIX seconds; at most 4 hours after the end (clamped).
    ///   - endedBy: Who ends it: the reaper at the lifetime (`lifetime`), or a renewal whose successor took over.
    /// - Throws: ``StoreError``: `notFound` activity; `activityEnded` when it, or its feed, has ended (the feed's end
    ///   reaches it); `conflict` for a standalone or channel-based activity (a broadcast would end every follower).
    package func endFollower(appID: Int64, activityKey: String, dismissalDate: Int?, by endedBy: EndedBy = .lifetime) async throws -> AcceptedUpdate {
        var request = Request(appID: appID, activityKey: activityKey, event: .end)
        request.content.dismissalDate = dismissalDate
        return try await UpdateAcceptance.accept(request, client: self.client, logger: self.logger) { [logger] connection in
            try await endedBy.declare(on: connection, logger: logger)
            return try await ActivityTarget.lock(appID: appID, activityKey: activityKey, asFollower: true, on: connection, logger: logger)
        }
    }

    /// Ends, in the caller's transaction, a token-based follower reported after its feed ended: a start or renewal
    /// sent before the end whose activity the device reported only later. It gets the feed's last content state, on
    /// its own token, so it shows the end as the other followers do.
    /// - Parameter dismissalDate: UNIX seconds; at most 4 hours after the end (clamped).
    /// - Throws: what ``endFollower(appID:activityKey:dismissalDate:by:)`` throws, but for the feed's end.
    static func endAfterItsFeed(
        appID: Int64,
        activityKey: String,
        dismissalDate: Int?,
        on connection: PostgresConnection,
        logger: Logger
    )
        async throws -> AcceptedUpdate
    {
        var request = Request(appID: appID, activityKey: activityKey, event: .end)
        request.content.dismissalDate = dismissalDate
        return try await UpdateAcceptance.accept(request, on: connection, logger: logger) { connection in
            try await ActivityTarget.lock(
                appID: appID,
                activityKey: activityKey,
                asFollower: true,
                afterItsFeed: true,
                on: connection,
                logger: logger
            )
        }
    }
}
