import APNs
import LivecastCore
import LivecastStore

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
    /// `apns-expiration`, when APNs should stop trying: a renewal's is short.
    var expiration: APNsExpiration = .none
    /// An iOS 18 device's start on the feed's channel.
    var usesChannelPayload = false
    /// Whether a client key registered the token and APNs has yet to accept a push to it (``InvalidationGuard``).
    var isUnproven = false
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

        /// The `deliveries` row of this failed push of an update.
        func failedPush(of updateID: Int64) -> FailedPush {
            FailedPush(updateID: updateID, target: self.token, status: self.status, reason: self.reason, apnsID: self.apnsID)
        }
    }

    /// The owners (``PageTarget/ownerID``) of the pushes APNs accepted.
    var delivered: [Int64] = []
    /// The unproven tokens (rows) APNs accepted a push to: proven from now on.
    var proven: [Int64] = []
    var failures: [Failure] = []
    var invalidations: [TokenInvalidation] = []
    /// Pushes APNs asked to retry later: carried forward, owed to their targets.
    var owed: [OwedTarget] = []
    /// Why the invalidation guard tripped on this batch: its invalid-token answers are owed, not applied, and the
    /// app's sending is to be held.
    var guardReason: String?
    /// Why the refusals of this batch's unproven tokens put the app's credentials in doubt
    /// (``InvalidationGuard/Judgement/doubt``): they are owed until the credentials are proven, holding nothing.
    var credentialsDoubt: String?
}

extension PageDelivery {
    /// What the store records of this batch, a page of `updateID`: its owed pushes get their delays from the retry
    /// policy (``PushRecorder/owed(_:)``).
    func record(of updateID: Int64, recorder: PushRecorder) -> PageRecord {
        var record = PageRecord()
        record.delivered = self.delivered.count
        record.failures = self.failures.map { $0.failedPush(of: updateID) }
        record.owed = recorder.owed(self.owed)
        record.proven = self.proven
        record.invalidations = self.invalidations
        record.holdReason = self.guardReason
        record.credentialsDoubt = self.credentialsDoubt
        return record
    }
}

/// Sends batches of device pushes once, and sorts APNs' answers; the invalidation guard judges each batch.
struct PageSender: Sendable {
    let invalidationGuard: InvalidationGuard
    let credentialsProofs: CredentialsProofs

    /// Sends a batch of device pushes once; what APNs asks to retry later is returned as owed, for the outbox to
    /// carry forward (``PushRecorder/owe(_:updateID:appID:on:)``), not retried in place. Proven tokens go first, so
    /// that a batch full of a stranger's inventions does not delay them (APNs closes connections that send too many
    /// bad tokens). An unproven token refused before the app's credentials are proven is owed until they are.
    func deliver(_ batch: [PageTarget], tokens: TokenTable, app: AppClient, priority: APNsPriority) async -> PageDelivery {
        let targets = batch.filter { !$0.isUnproven } + batch.filter(\.isUnproven)
        var delivery = PageDelivery()
        delivery.delivered.reserveCapacity(targets.count)
        let outcomes = await app.client.send(
            targets.map {
                DevicePush(
                    deviceToken: $0.token,
                    bundleID: app.bundleID,
                    payload: $0.payload,
                    priority: priority,
                    expiration: $0.expiration,
                    apnsID: $0.pushID?.uuid,
                    collapseID: $0.collapseID
                )
            }
        )
        DispatchMetrics.record(outcomes, target: "device")
        let judgement = await self.judge(outcomes, unproven: targets.map(\.isUnproven), app: app)
        delivery.guardReason = judgement.holdReason
        delivery.credentialsDoubt = judgement.doubt
        for (target, outcome) in zip(targets, outcomes) {
            let awaitsProof = target.isUnproven && !judgement.credentialsProven
            switch outcome.classification {
            case .delivered:
                delivery.delivered.append(target.ownerID)
                if target.isUnproven { delivery.proven.append(target.tokenID) }
            case .retryLater,
                .tokenInvalid where judgement.holdReason != nil || awaitsProof:
                delivery.owed.append(
                    OwedTarget(
                        kind: tokens.owedKind,
                        id: target.ownerID,
                        usesChannelPayload: target.usesChannelPayload,
                        status: outcome.status,
                        reason: outcome.failureReason,
                        awaitsProof: outcome.classification == .tokenInvalid && judgement.holdReason == nil
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

    /// The invalidation guard's verdict on a batch (``InvalidationGuard/judge(_:unproven:credentialsProven:)``);
    /// a batch with an accepted push proves the app's credentials.
    func judge(_ outcomes: [APNsOutcome], unproven: [Bool], app: AppClient) async -> InvalidationGuard.Judgement {
        if outcomes.contains(where: { $0.classification == .delivered }) { await self.credentialsProofs.record(appID: app.appID) }
        return await self.invalidationGuard.judge(outcomes, unproven: unproven) {
            await self.credentialsProofs.isProven(appID: app.appID)
        }
    }
}
