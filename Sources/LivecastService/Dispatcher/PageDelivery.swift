import APNs
import LivecastStore
import PostgresNIO
import ServiceLifecycle

/// One device push of a page: a token and the payload it gets.
struct PageTarget: Sendable {
    /// The token's row (`activity_tokens` or `push_to_start_tokens`).
    var tokenID: Int64
    var token: String
    var payload: [UInt8]
}

/// What came of a page of device pushes.
struct PageDelivery: Sendable {
    /// A push that did not get through, kept as a `deliveries` row.
    struct Failure: Sendable {
        var token: String
        var status: Int?
        var reason: String
    }

    /// A token APNs refused, with its verdict.
    struct Invalidation: Sendable {
        var tokenID: Int64
        var token: String
        var reason: String
        var invalidSinceMillis: Int64?
    }

    var sent = 0
    var failures: [Failure] = []
    var invalidations: [Invalidation] = []
    /// A graceful shutdown came while APNs had pushes to retry: the page is unfinished, and is not to be recorded
    /// or checkpointed (the next dispatcher sends it again).
    var interrupted = false
}

/// Which table a page's tokens live in.
enum TokenTable {
    case activityTokens
    case pushToStartTokens
}

extension Dispatcher {
    /// Sends a page in one batch; pushes APNs asks to retry later go again after a backoff, a few rounds.
    /// - Parameter repeatable: Whether sending the page again is harmless (an update: a device ignores a timestamp
    ///   it has). Such a page stops retrying on graceful shutdown, so the shutdown waits for one round at most.
    func deliver(_ targets: [PageTarget], client: APNsClient, bundleID: String, priority: Int, repeatable: Bool) async -> PageDelivery {
        var delivery = PageDelivery()
        var pending = targets
        var round = 0
        while !pending.isEmpty {
            if round > 0 {
                let backoff = self.settings.retryBackoff * (1 << (round - 1)) * Double.random(in: 0.8...1.2)
                if repeatable {
                    await cancelWhenGracefulShutdown { try? await Task.sleep(for: backoff) }
                    if Task.isShuttingDownGracefully {
                        delivery.interrupted = true
                        return delivery
                    }
                } else {
                    try? await Task.sleep(for: backoff)
                }
            }
            let outcomes = await client.send(
                pending.map { DevicePush(deviceToken: $0.token, bundleID: bundleID, payload: $0.payload, priority: priority) }
            )
            DispatchMetrics.record(outcomes, target: "device")
            var again: [PageTarget] = []
            for (target, outcome) in zip(pending, outcomes) {
                switch outcome.classification {
                case .delivered:
                    delivery.sent += 1
                case .retryLater where round < self.settings.retryRounds:
                    again.append(target)
                case .tokenInvalid:
                    let reason = outcome.reason?.rawValue ?? "Unregistered"
                    delivery.invalidations.append(
                        .init(tokenID: target.tokenID, token: target.token, reason: reason, invalidSinceMillis: outcome.invalidSince.map(Int64.init))
                    )
                    delivery.failures.append(.init(token: target.token, status: outcome.status, reason: reason))
                default:
                    delivery.failures.append(.init(token: target.token, status: outcome.status, reason: outcome.failureReason))
                }
            }
            pending = again
            round += 1
        }
        return delivery
    }

    /// Writes a page's failures (one statement) and applies APNs' verdicts on the tokens it refused.
    func record(_ delivery: PageDelivery, updateID: Int64, appID: Int64, tokens: TokenTable, on connection: PostgresConnection) async throws {
        if !delivery.failures.isEmpty {
            try await connection.query(
                """
                INSERT INTO deliveries (update_id, target_kind, target, status, reason)
                SELECT \(updateID), 'device', target, nullif(status, 0), reason
                FROM unnest(\(delivery.failures.map(\.token))::text[], \(delivery.failures.map { $0.status ?? 0 })::int[],
                            \(delivery.failures.map(\.reason))::text[]) AS failure(target, status, reason)
                """,
                logger: self.logger
            )
        }
        var invalidated = 0
        for invalidation in delivery.invalidations {
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
