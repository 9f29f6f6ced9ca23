import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Accepting updates and ends for one standalone activity into the outbox, with DESIGN.md's ordering and
/// lifecycle rules checked in the same transaction that stores the update.
public struct ActivityUpdates: Sendable {
    /// An update or end a backend asks for.
    public struct Request: Sendable, Hashable {
        public var appID: Int64
        public var activityKey: String
        /// `.update` or `.end`.
        public var event: LiveActivityEvent
        public var contentState: RawJSON?
        /// UNIX seconds; the server's time when `nil`.
        public var timestamp: Int?
        public var staleDate: Int?
        public var dismissalDate: Int?
        public var alert: LiveActivityAlert?
        public var relevanceScore: Double?
        /// 5 or 10; 10 when an alert is given, else 5, when `nil`.
        public var priority: Int?
        public var idempotencyKey: String?

        public init(appID: Int64, activityKey: String, event: LiveActivityEvent, contentState: RawJSON? = nil, timestamp: Int? = nil) {
            self.appID = appID
            self.activityKey = activityKey
            self.event = event
            self.contentState = contentState
            self.timestamp = timestamp
        }
    }

    /// What was stored.
    public struct Accepted: Sendable, Hashable {
        public var updateID: Int64
        /// The timestamp the update goes out with (one second after the last when coalesced).
        public var timestamp: Int
        public var priority: Int
        /// Whether a same-second predecessor was superseded (it will not be sent).
        public var coalesced: Bool
        /// Whether `dismissal-date` was brought back to 4 hours after the end.
        public var dismissalDateClamped: Bool
        /// Whether this answers a retried request with the same idempotency key.
        public var isReplay: Bool
    }

    /// The longest an ended activity may stay on the Lock Screen.
    public static let maximumDismissalDelay = 4 * 3600

    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Checks and stores an update or end.
    /// - Parameter now: The server's time, in UNIX seconds.
    /// - Throws: ``StoreError``: `notFound` activity; `activityEnded`; `staleTimestamp` for a timestamp older than
    ///   the last accepted; `payloadTooLarge` with the measured size; `invalid` for a start, a bad priority or
    ///   payload rule (naming the field). Nothing is written when it throws.
    public func accept(_ request: Request, now: Int) async throws -> Accepted {
        guard request.event != .start else {
            throw StoreError(.invalid, "an activity's own update token cannot start it", field: "event")
        }
        let priority = request.priority ?? (request.alert == nil ? 5 : 10)
        guard priority == 5 || priority == 10 else { throw StoreError(.invalid, "priority must be 5 or 10", field: "priority") }
        do {
            return try await self.client.withTransaction(logger: self.logger) { connection in
                try await self.accept(request, priority: priority, now: now, on: connection)
            }
        } catch let error as PostgresTransactionError {
            if let storeError = error.closureError as? StoreError { throw storeError }
            if StoreError.isUniqueViolation(error) { throw StoreError(.conflict, "a request with this idempotency key is in progress; retry") }
            throw error
        }
    }

    private func accept(_ request: Request, priority: Int, now: Int, on connection: PostgresConnection) async throws -> Accepted {
        if let key = request.idempotencyKey {
            let earlier = try await connection.query(
                "SELECT id, timestamp, priority::int FROM updates WHERE app_id = \(request.appID) AND idempotency_key = \(key)",
                logger: self.logger
            )
            for try await (id, timestamp, priority) in earlier.decode((Int64, Int, Int).self) {
                return Accepted(updateID: id, timestamp: timestamp, priority: priority, coalesced: false, dismissalDateClamped: false, isReplay: true)
            }
        }
        let rows = try await connection.query(
            "SELECT id, state, last_timestamp FROM activities WHERE app_id = \(request.appID) AND activity_key = \(request.activityKey) FOR UPDATE",
            logger: self.logger
        )
        var found: (id: Int64, state: String, lastTimestamp: Int?)?
        for try await row in rows.decode((Int64, String, Int?).self) { found = row }
        guard let activity = found else { throw StoreError(.notFound, "no activity \(request.activityKey)", field: "activityId") }
        guard activity.state == "active" || activity.state == "starting" else {
            throw StoreError(.activityEnded, "the activity has ended", field: "activityId")
        }
        // Ordering: strictly increasing per target; an update in the same second as the last goes out one second
        // later and replaces its predecessor, which is never sent.
        var timestamp = request.timestamp ?? now
        var coalesced = false
        if let last = activity.lastTimestamp {
            if timestamp < last, request.timestamp != nil {
                throw StoreError(.staleTimestamp, "timestamp \(timestamp) is older than the last accepted, \(last)", field: "timestamp")
            }
            if timestamp <= last {
                timestamp = last + 1
                coalesced = true
            }
        }
        var payload = LiveActivityPayload(event: request.event, timestamp: timestamp, contentState: request.contentState)
        payload.staleDate = request.staleDate
        payload.alert = request.alert
        payload.relevanceScore = request.relevanceScore
        var clamped = false
        if request.event == .end, let dismissal = request.dismissalDate {
            payload.dismissalDate = min(dismissal, timestamp + Self.maximumDismissalDelay)
            clamped = payload.dismissalDate != dismissal
        } else {
            payload.dismissalDate = request.dismissalDate
        }
        let bytes: [UInt8]
        do {
            bytes = try payload.validated(for: .device)
        } catch {
            if error.code == .payloadTooLarge {
                throw StoreError(.payloadTooLarge, error.message, field: "contentState")
            }
            throw StoreError(.invalid, error.message, field: error.field)
        }
        // A coalesced update waits for its second to begin, so a later one in the same second can replace it too.
        if coalesced {
            try await connection.query(
                "UPDATE updates SET status = 'superseded', completed_at = now() WHERE activity_id = \(activity.id) AND status = 'pending'",
                logger: self.logger
            )
        }
        let inserted = try await connection.query(
            """
            INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, stale_date, dismissal_date, relevance_score,
                                 priority, idempotency_key, not_before, payload)
            VALUES (\(request.appID), \(activity.id), \(request.event.rawValue), \(timestamp), \(request.contentState?.text),
                    \(payload.staleDate), \(payload.dismissalDate), \(payload.relevanceScore), \(Int16(priority)), \(request.idempotencyKey),
                    CASE WHEN \(coalesced) THEN to_timestamp(\(Double(timestamp))) ELSE now() END, \(String(decoding: bytes, as: UTF8.self)))
            RETURNING id
            """,
            logger: self.logger
        )
        var updateID: Int64 = 0
        for try await id in inserted.decode(Int64.self) { updateID = id }
        if request.event == .end {
            try await connection.query(
                "UPDATE activities SET last_timestamp = \(timestamp), state = 'ended', ended_at = now(), dismissal_date = \(payload.dismissalDate) WHERE id = \(activity.id)",
                logger: self.logger
            )
        } else {
            try await connection.query(
                "UPDATE activities SET last_timestamp = \(timestamp), stale_date = coalesce(\(payload.staleDate), stale_date) WHERE id = \(activity.id)",
                logger: self.logger
            )
        }
        return Accepted(updateID: updateID, timestamp: timestamp, priority: priority, coalesced: coalesced, dismissalDateClamped: clamped, isReplay: false)
    }
}
