import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO

/// What the outbox tests (`Outbox…Tests`) share: dispatchers' outboxes under claimers of their own, targets with
/// updates put in through the acceptance types, and the outbox's rows read back as the contracts speak of them.
extension StoreFixture {
    /// The feed the outbox tests update.
    static let feedKey = "game-1"

    /// The outbox as a dispatcher of its own (a new claimer) works it.
    func outbox(lease: Duration = .seconds(30)) -> Outbox {
        Outbox(database: self.client, claimer: UUID(), lease: lease, retryDeadline: RetryDeadline(period: .seconds(3600)), logger: self.logger)
    }

    /// A feed with `followers` token-based followers. - Returns: the feed's id and its followers' activity ids, in order.
    func makeFeed(followers: Int) async throws -> (feedID: Int64, followers: [Int64]) {
        let (feed, _) = try await Feeds(client: self.client, logger: self.logger).put(
            .init(
                appID: self.appID,
                feedKey: Self.feedKey,
                attributesType: "GameAttributes",
                attributes: try RawJSON(validating: #"{"team":"Giants"}"#)
            )
        )
        let activities = Activities(client: self.client, logger: self.logger)
        for index in 0..<followers {
            _ = try await activities.register(
                .init(
                    appID: self.appID,
                    activityKey: "fan-\(index)",
                    attributesType: "GameAttributes",
                    feedKey: Self.feedKey,
                    pushToken: String(format: "ab%04x", index)
                )
            )
        }
        let rows = try await self.client.query("SELECT id FROM activities WHERE feed_id = \(feed.id) ORDER BY id")
        return (feed.id, try await rows.decode(Int64.self).reduce(into: []) { $0.append($1) })
    }

    /// Accepts an update of the feed (``FeedUpdates``), `{"home": home}` at `timestamp`.
    func acceptFeedUpdate(home: Int, timestamp: Int, priority: Int? = nil) async throws -> AcceptedUpdate {
        var request = FeedUpdates.Request(
            appID: self.appID,
            feedKey: Self.feedKey,
            event: .update,
            contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
            timestamp: timestamp
        )
        request.content.priority = priority
        return try await FeedUpdates(client: self.client, logger: self.logger).accept(request)
    }

    /// Registers a standalone activity with an update token (`token`, else the key's bytes in hex). - Returns: its id.
    @discardableResult
    func makeActivity(_ key: String, token: String? = nil) async throws -> Int64 {
        let hex = key.utf8.map { String(format: "%02x", $0) }.joined()
        _ = try await Activities(client: self.client, logger: self.logger).register(
            .init(appID: self.appID, activityKey: key, attributesType: "OrderAttributes", pushToken: token ?? hex)
        )
        let rows = try await self.client.query("SELECT id FROM activities WHERE activity_key = \(key)")
        for try await id in rows.decode(Int64.self) { return id }
        throw StoreError(.notFound, "no activity \(key)")
    }

    /// A standalone activity's update request, `{"eta": eta}` at `timestamp`.
    func activityUpdate(_ key: String, eta: Int, timestamp: Int, priority: Int? = nil) throws -> ActivityUpdates.Request {
        var request = ActivityUpdates.Request(
            appID: self.appID,
            activityKey: key,
            event: .update,
            contentState: try RawJSON(validating: #"{"eta":\#(eta)}"#),
            timestamp: timestamp
        )
        request.content.priority = priority
        return request
    }

    /// Accepts a standalone activity's update (``ActivityUpdates``), `{"eta": eta}` at `timestamp`.
    func acceptActivityUpdate(_ key: String, eta: Int, timestamp: Int) async throws -> AcceptedUpdate {
        try await ActivityUpdates(client: self.client, logger: self.logger).accept(try self.activityUpdate(key, eta: eta, timestamp: timestamp))
    }

    /// An update's row as the outbox's contracts read it.
    func update(_ id: Int64) async throws -> OutboxUpdateRow {
        let rows = try await self.client.query(
            """
            SELECT status, claimed_by, cursor_id, sent_count, attempts, extract(epoch FROM not_before - now())::float8, timestamp,
                priority::int, content_state, extract(epoch FROM not_before)::float8
            FROM updates WHERE id = \(id)
            """
        )
        for try await row in rows.decode((String, UUID?, Int64, Int64, Int, Double, Int, Int, String?, Double).self) {
            return OutboxUpdateRow(
                status: row.0,
                claimedBy: row.1,
                cursor: row.2,
                sentCount: row.3,
                attempts: row.4,
                leaseLeft: row.5,
                timestamp: row.6,
                priority: row.7,
                contentState: row.8,
                notBefore: row.9
            )
        }
        throw StoreError(.notFound, "no update \(id)")
    }

    /// Every owed push, oldest first: its update, target and claimer.
    func owedPushes() async throws -> [OwedRow] {
        let rows = try await self.client.query("SELECT update_id, target_id, claimed_by FROM owed_pushes ORDER BY update_id, target_id")
        return try await rows.decode((Int64, Int64, UUID?).self).reduce(into: []) {
            $0.append(OwedRow(updateID: $1.0, targetID: $1.1, claimedBy: $1.2))
        }
    }

    /// Lets the leases of every claimed update, slice and owed push run out, as if their dispatchers had died a
    /// lease ago: a lease is a claim's `not_before`.
    func expireLeases() async throws {
        try await self.client.query("UPDATE updates SET not_before = now() - interval '1 second' WHERE status = 'dispatching'")
        try await self.client.query("UPDATE fan_out_slices SET not_before = now() - interval '1 second' WHERE status = 'dispatching'")
        try await self.client.query("UPDATE owed_pushes SET not_before = now() - interval '1 second' WHERE claimed_by IS NOT NULL")
    }

    /// The database's clock in whole UNIX seconds, which the tests' timestamps start from.
    func databaseNow() async throws -> Int {
        let rows = try await self.client.query("SELECT floor(extract(epoch FROM now()))::bigint")
        for try await seconds in rows.decode(Int.self) { return seconds }
        throw StoreError(.notFound, "no clock")
    }
}

/// An update's row (`updates`), as ``StoreFixture/update(_:)`` reads it.
struct OutboxUpdateRow {
    var status: String
    var claimedBy: UUID?
    /// The fan-out's checkpoint: the last follower walked.
    var cursor: Int64
    var sentCount: Int64
    /// Claims in a row without a checkpoint.
    var attempts: Int
    /// Seconds until `not_before`: what is left of a claim's lease (negative once it ran out).
    var leaseLeft: Double
    var timestamp: Int
    var priority: Int
    var contentState: String?
    /// `not_before` in UNIX seconds: when the row may next be claimed.
    var notBefore: Double
}

/// An owed push (`owed_pushes`), as ``StoreFixture/owedPushes()`` reads it.
struct OwedRow: Equatable {
    var updateID: Int64
    var targetID: Int64
    var claimedBy: UUID?
}
