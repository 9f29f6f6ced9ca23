import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

/// One device push of a page: a token, the payload it gets, and the target it is owed to if APNs asks to retry.
struct PageTarget: Sendable {
    /// The token's row (`activity_tokens` or `push_to_start_tokens`).
    var tokenID: Int64
    var token: String
    var payload: [UInt8]
    /// What the push is owed to when APNs asks to retry it later: the activity, or the push-to-start token's row.
    var ownerID: Int64
    /// The push's `apns-id`, which names its update and target (``PushID``).
    var pushID: PushID?
    /// `apns-collapse-id`: a start's, stable per device and feed (``PushID/startCollapseID(feedID:)``).
    var collapseID: String?
    /// An iOS 18 device's start on the feed's channel.
    var usesChannelPayload = false
}

/// What came of a batch of device pushes.
struct PageDelivery: Sendable {
    /// A push that did not get through, kept as a `deliveries` row.
    struct Failure: Sendable {
        /// The push's ``PageTarget/ownerID``.
        var ownerID: Int64
        var token: String
        var status: Int?
        var reason: String
        /// The push's `apns-id`, when Livecast set it.
        var apnsID: String?
    }

    /// A token APNs refused, with its verdict.
    struct Invalidation: Sendable {
        var tokenID: Int64
        var token: String
        var reason: String
        var invalidSinceMillis: Int64?
    }

    /// The owners (``PageTarget/ownerID``) of the pushes APNs accepted.
    var delivered: [Int64] = []
    var failures: [Failure] = []
    var invalidations: [Invalidation] = []
    /// Pushes APNs asked to retry later: carried forward, owed to their targets.
    var owed: [OwedTarget] = []
    /// Why the invalidation guard tripped on this batch: its invalid-token answers are owed, not applied, and the
    /// app's sending is to be held.
    var guardReason: String?
}

/// Which table a page's tokens live in.
enum TokenTable {
    case activityTokens
    case pushToStartTokens

    /// What a push to such a token is owed to.
    var owedKind: OwedTarget.Kind { self == .activityTokens ? .activity : .pushToStart }
}

extension Dispatcher {
    /// Sends a batch of device pushes once; what APNs asks to retry later is returned as owed, for the outbox to
    /// carry forward (``owe(_:updateID:appID:on:)``), not retried in place.
    func deliver(_ targets: [PageTarget], tokens: TokenTable, client: APNsClient, bundleID: String, priority: Int) async -> PageDelivery {
        var delivery = PageDelivery()
        delivery.delivered.reserveCapacity(targets.count)
        let outcomes = await client.send(
            targets.map {
                DevicePush(
                    deviceToken: $0.token,
                    bundleID: bundleID,
                    payload: $0.payload,
                    priority: priority,
                    apnsID: $0.pushID?.uuidString,
                    collapseID: $0.collapseID
                )
            }
        )
        DispatchMetrics.record(outcomes, target: "device")
        delivery.guardReason = self.invalidationGuard.trip(outcomes)
        for (target, outcome) in zip(targets, outcomes) {
            switch outcome.classification {
            case .delivered:
                delivery.delivered.append(target.ownerID)
            case .retryLater,
                .tokenInvalid where delivery.guardReason != nil:
                delivery.owed.append(
                    OwedTarget(
                        kind: tokens.owedKind,
                        id: target.ownerID,
                        usesChannelPayload: target.usesChannelPayload,
                        status: outcome.status,
                        reason: outcome.failureReason
                    )
                )
            case .tokenInvalid:
                let reason = outcome.reason?.rawValue ?? "Unregistered"
                delivery.invalidations.append(
                    .init(tokenID: target.tokenID, token: target.token, reason: reason, invalidSinceMillis: outcome.invalidSince.map(Int64.init))
                )
                delivery.failures.append(
                    .init(ownerID: target.ownerID, token: target.token, status: outcome.status, reason: reason, apnsID: target.pushID?.uuidString)
                )
            default:
                delivery.failures.append(
                    .init(
                        ownerID: target.ownerID,
                        token: target.token,
                        status: outcome.status,
                        reason: outcome.failureReason,
                        apnsID: target.pushID?.uuidString
                    )
                )
            }
        }
        return delivery
    }

    /// Writes a page's failures (one statement), carries its owed pushes forward, and applies APNs' verdicts on the
    /// tokens it refused.
    func record(_ delivery: PageDelivery, updateID: Int64, appID: Int64, tokens: TokenTable, on connection: PostgresConnection) async throws {
        if let reason = delivery.guardReason { try await self.holdSending(appID: appID, reason: reason) }
        try await self.owe(delivery.owed, updateID: updateID, appID: appID, on: connection)
        try await self.recordFailures(delivery.failures, updateIDs: Array(repeating: updateID, count: delivery.failures.count), on: connection)
        try await self.applyInvalidations(delivery.invalidations, appID: appID, tokens: tokens)
    }

    /// Writes failed device pushes as `deliveries` rows, in one statement.
    func recordFailures(_ failures: [PageDelivery.Failure], updateIDs: [Int64], on connection: PostgresConnection) async throws {
        guard !failures.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
            SELECT update_id, 'device', target, nullif(status, 0), reason, nullif(apns_id, '')
            FROM unnest(\(updateIDs)::bigint[], \(failures.map(\.token))::text[], \(failures.map { $0.status ?? 0 })::int[],
                        \(failures.map(\.reason))::text[], \(failures.map { $0.apnsID ?? "" })::text[])
                AS failure(update_id, target, status, reason, apns_id)
            """,
            logger: self.logger
        )
    }

    /// Applies APNs' verdicts on the tokens it refused (410 `Unregistered`, 400 `BadDeviceToken`).
    func applyInvalidations(_ invalidations: [PageDelivery.Invalidation], appID: Int64, tokens: TokenTable) async throws {
        var invalidated = 0
        for invalidation in invalidations {
            switch tokens {
            case .activityTokens:
                invalidated +=
                    try await Activities(client: self.database, logger: self.logger)
                    .invalidateToken(id: invalidation.tokenID, reason: invalidation.reason, invalidSinceMillis: invalidation.invalidSinceMillis)
                    ? 1 : 0
            case .pushToStartTokens:
                invalidated +=
                    try await PushToStartTokens(client: self.database, logger: self.logger).invalidate(
                        appID: appID,
                        token: invalidation.token,
                        reason: PushToStartTokens.InvalidationReason(rawValue: invalidation.reason) ?? .unregistered,
                        invalidSinceMillis: invalidation.invalidSinceMillis
                    ) ? 1 : 0
            }
        }
        DispatchMetrics.tokensInvalidated(invalidated, kind: tokens == .activityTokens ? "update" : "pushToStart")
    }
}
