/// The store's half of a fan-out, and all a worker sees of it: it hands out claims, and for each claim a session that
/// hands out the next page under the feed's send lock and takes back one record of what became of it
/// (docs/ARCHITECTURE.md, "The fan-out's contract"). The worker never holds a connection or a lock; the session owns
/// both, and its statements, while the worker keeps the policy (the sort of a page's targets, the invalidation guard,
/// the retry delays) and the sends. ``Outbox`` is the one implementation.
///
/// A one-page fan-out is four calls (``claimFanOut(perApp:)``, ``FanOutSession/begin()``,
/// ``FanOutSession/record(_:next:)``, ``FanOutSession/finish(_:)``), five with a broadcast
/// (``FanOutSession/recordChannel(_:)``).
package protocol FanOutDriver: Sendable {
    /// Claims the oldest due fan-out of an app with fewer than `perApp` out, under a lease.
    func claimFanOut(perApp: Int) async throws -> FanOutClaim?
    /// Claims the first due slice of a split fan-out, under a lease.
    func claimSlice(perApp: Int) async throws -> FanOutClaim?
    /// Opens a session on a claim, on one connection it holds until `body` returns, and releases the send lock
    /// whatever happens.
    func withFanOutSession<Result: Sendable>(
        _ claim: FanOutClaim,
        limits: FanOutLimits,
        _ body: @escaping @Sendable (any FanOutSession) async throws -> Result
    ) async throws -> Result
}

/// One claimed fan-out's walk, as the store runs it. Every call is one round trip of the worker's; each may run several
/// statements. A call that hands out a page (``FanOutStep/page(_:)``) of followers holds the feed's send lock
/// (``SendLocks/feedNamespace``) until the next call, so a token rotation never crosses a page between its read and
/// APNs' answers.
package protocol FanOutSession: AnyObject {
    /// The claim, as of its last checkpoint.
    var claim: FanOutClaim { get }
    /// The targets whose older push is in flight, with that push's update: a page's push to one of them is owed
    /// behind it, not sent (``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``,
    /// ``Outbox/tokensOwedOlderStarts(appID:before:on:)``). Read before the first page.
    var busy: [Int64: Int64] { get }
    /// Whether the feed's channel is live: a start's iOS 18 devices start on it.
    var channelIsLive: Bool { get }

    /// Begins the walk: makes way for the update's pushes, and hands out the channel to broadcast to first, or the
    /// first page (the claim's channel is done, or it has none: then it is checkpointed so), or says the followers
    /// went to slices (``Outbox/split(_:size:on:)``).
    func begin() async throws -> FanOutStep
    /// Records the channel's part (the broadcast's delivery, a push owed to it, its counts, an end's channel followers
    /// ended), checkpoints it as done, and goes on as ``begin()`` does after the channel.
    func recordChannel(_ record: ChannelRecord) async throws -> FanOutStep
    /// Releases the send lock and records what became of the last page handed out (the app's sending held, its
    /// credentials doubted, owed pushes, failures, APNs' verdicts on tokens, proofs, an end's activities ended),
    /// then checkpoints after it.
    /// - Parameter next: Whether to hand out the next page (``FanOutStep/page(_:)``); else ``FanOutStep/walked``.
    /// - Throws: ``LostClaim`` when another dispatcher took the claim over.
    func record(_ page: PageRecord, next: Bool) async throws -> (step: FanOutStep, recorded: PageRecorded)
    /// Ends the claim: done, put back for a later try, or given up as a dead letter.
    func finish(_ ending: FanOutEnding) async throws
}

/// What a session's page walk is bounded by.
package struct FanOutLimits: Sendable {
    /// Followers (or audience members) a page.
    package var pageSize: Int
    /// Followers a slice: a fan-out to more is split (``Outbox/split(_:size:on:)``).
    package var sliceSize: Int
    /// The push-to-start budget a start's devices are kept within (``Outbox/admitStarts(_:of:budget:on:)``).
    package var startBudget: StartBudget

    package init(pageSize: Int, sliceSize: Int, startBudget: StartBudget) {
        self.pageSize = pageSize
        self.sliceSize = sliceSize
        self.startBudget = startBudget
    }
}

/// What a fan-out's worker does next.
package enum FanOutStep: Sendable {
    /// Broadcast to the feed's live channel, unless a push to it is in flight (`inFlight`, its update), then record
    /// it (``FanOutSession/recordChannel(_:)``).
    case broadcast(LiveChannel, inFlight: Int64?)
    /// Send a page; an empty one ends the walk.
    case page(FanOutPage)
    /// The followers were split into slices, which any worker claims: this claim is theirs now.
    case split
    /// The walk is done, or was stopped as asked: ``FanOutSession/finish(_:)``.
    case walked
}

/// A page of a fan-out, in keyset order.
package enum FanOutPage: Sendable {
    /// An update's or end's token-based followers, read under the feed's send lock.
    case followers([Follower])
    /// A start's audience, each device admitted before its push (``Outbox/admitStarts(_:of:budget:on:)``): those
    /// missing from `admitted` are left out.
    case audience([AudienceMember], admitted: [String: StartAdmission])

    /// The page's rows (activity ids, or push-to-start token ids): the last is the next checkpoint.
    package var rowIDs: [Int64] {
        switch self {
        case .followers(let followers): followers.map(\.activityID)
        case .audience(let members, _): members.map(\.tokenRowID)
        }
    }
}

/// A push carried forward to its target, due after `delay` seconds (``Outbox/owe(_:delays:updateID:appID:on:)``).
package struct OwedPush: Sendable {
    package var target: OwedTarget
    package var delay: Double

    package init(_ target: OwedTarget, delay: Double) {
        self.target = target
        self.delay = delay
    }
}

/// What came of a fan-out's channel.
package struct ChannelRecord: Sendable {
    /// The broadcast's `deliveries` row, when one was sent.
    package var broadcast: BroadcastDelivery?
    /// A push owed to the channel: APNs asked to retry, or one is in flight.
    package var owed: [OwedPush]
    package var sent: Int
    package var failed: Int

    package init(broadcast: BroadcastDelivery? = nil, owed: [OwedPush] = [], sent: Int = 0, failed: Int = 0) {
        self.broadcast = broadcast
        self.owed = owed
        self.sent = sent
        self.failed = failed
    }
}

/// A broadcast, as kept in `deliveries` (each is, successes too).
package struct BroadcastDelivery: Sendable {
    package var updateID: Int64
    package var channelID: String
    package var status: Int?
    /// APNs' reason, `nil` for a broadcast it accepted.
    package var failureReason: String?
    /// Its `apns-request-id`.
    package var requestID: String?
    /// APNs no longer has the channel: it is marked missing in the registry.
    package var channelGone: Bool

    package init(updateID: Int64, channelID: String, status: Int?, failureReason: String?, requestID: String?, channelGone: Bool) {
        self.updateID = updateID
        self.channelID = channelID
        self.status = status
        self.failureReason = failureReason
        self.requestID = requestID
        self.channelGone = channelGone
    }
}

/// What became of a page's pushes, to record.
package struct PageRecord: Sendable {
    /// How many pushes APNs accepted.
    package var delivered = 0
    package var failures: [FailedPush] = []
    package var owed: [OwedPush] = []
    /// The unproven tokens (rows) APNs accepted a push to: proven from now on.
    package var proven: [Int64] = []
    package var invalidations: [TokenInvalidation] = []
    /// Why the invalidation guard tripped: the app's sending is held.
    package var holdReason: String?
    /// Why the app's credentials are in doubt.
    package var credentialsDoubt: String?

    package init() {}
}

/// What recording a page changed beyond its own rows, for the worker to report.
package struct PageRecorded: Sendable {
    /// Tokens invalidated by APNs' verdicts.
    package var invalidated = 0
    /// Whether the app's credentials were put in doubt now (not before).
    package var doubtIsNew = false

    package init() {}
}

/// How a claimed fan-out ends.
package enum FanOutEnding: Sendable {
    /// Done: `sent`, or `failed`.
    case done(OutboxStatus)
    /// Back to the outbox at its checkpoint, due after `after`; `resettingAttempts` when it is not to count as a claim
    /// without progress.
    case putBack(after: Duration, resettingAttempts: Bool)
    /// Given up: `failed`, and kept as a dead letter.
    case givenUp(DeadLetter)
}
