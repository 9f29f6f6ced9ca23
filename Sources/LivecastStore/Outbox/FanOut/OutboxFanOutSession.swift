import LivecastCore
import Logging
import PostgresNIO

extension Outbox: FanOutDriver {
    /// Opens a fan-out session on a connection of its own (``FanOutDriver/withFanOutSession(_:limits:_:)``).
    package func withFanOutSession<Result: Sendable>(
        _ claim: FanOutClaim,
        limits: FanOutLimits,
        _ body: @escaping @Sendable (any FanOutSession) async throws -> Result
    ) async throws -> Result {
        try await self.database.withGuardedConnection(logger: self.logger) { connection in
            let session = OutboxFanOutSession(outbox: self, connection: connection, claim: claim, limits: limits)
            do {
                let result = try await body(session)
                try await session.unlock()
                return result
            } catch {
                try? await session.unlock()
                throw error
            }
        }
    }
}

/// A fan-out session over one pooled connection: the outbox's statements in the order a walk needs them
/// (docs/ARCHITECTURE.md, "The fan-out's contract").
final class OutboxFanOutSession: FanOutSession {
    private let outbox: Outbox
    private let connection: PostgresConnection
    private let limits: FanOutLimits
    private(set) var claim: FanOutClaim
    private(set) var busy: [Int64: Int64] = [:]
    private(set) var channelIsLive = false
    /// The rows of the page last handed out: its last is the next checkpoint.
    private var pageRowIDs: [Int64] = []
    /// Whether this session holds the feed's send lock (a page of followers is out).
    private var holdsSendLock = false

    init(outbox: Outbox, connection: PostgresConnection, claim: FanOutClaim, limits: FanOutLimits) {
        self.outbox = outbox
        self.connection = connection
        self.claim = claim
        self.limits = limits
    }

    func begin() async throws -> FanOutStep {
        if self.claim.event == .start {
            self.channelIsLive = try await self.outbox.liveChannel(ofFeed: self.claim.feedID, on: self.connection) != nil
            self.busy = try await self.outbox.tokensOwedOlderStarts(appID: self.claim.appID, before: self.claim.updateID, on: self.connection)
            return try await self.nextPage()
        }
        guard self.claim.slice == nil, !self.claim.channelDone else { return try await self.afterChannel() }
        let busy = try await self.outbox.clearOlderOwed(
            .channel,
            ofFeed: self.claim.feedID,
            after: 0,
            through: .max,
            upTo: self.claim.updateID,
            on: self.connection
        )
        let channel = try await self.outbox.liveChannel(ofFeed: self.claim.feedID, on: self.connection)
        guard self.claim.channelPayload != nil, let channel else {
            try await self.outbox.checkpoint(&self.claim, cursor: self.claim.cursor, sent: 0, failed: 0, channelDone: true, on: self.connection)
            return try await self.afterChannel()
        }
        return .broadcast(channel, inFlight: busy[channel.rowID])
    }

    func recordChannel(_ record: ChannelRecord) async throws -> FanOutStep {
        if let broadcast = record.broadcast { try await self.outbox.recordBroadcast(broadcast, on: self.connection) }
        try await self.owe(record.owed)
        try await self.outbox.checkpoint(
            &self.claim,
            cursor: self.claim.cursor,
            sent: record.sent,
            failed: record.failed,
            channelDone: true,
            on: self.connection
        )
        if self.claim.event == .end { try await self.outbox.endChannelFollowers(of: self.claim, on: self.connection) }
        return try await self.afterChannel()
    }

    func record(_ page: PageRecord, next: Bool) async throws -> (step: FanOutStep, recorded: PageRecorded) {
        try await self.unlock()
        let tokens: TokenTable = self.claim.event == .start ? .pushToStartTokens : .activityTokens
        let recorded = try await self.outbox.record(page, of: self.claim.updateID, appID: self.claim.appID, tokens: tokens, on: self.connection)
        if self.claim.event == .end {
            try await self.outbox.endActivities(
                self.pageRowIDs,
                timestamp: self.claim.timestamp,
                dismissalDate: self.claim.dismissalDate,
                on: self.connection
            )
        }
        if let last = self.pageRowIDs.last {
            try await self.outbox.checkpoint(&self.claim, cursor: last, sent: page.delivered, failed: page.failures.count, on: self.connection)
        }
        return (next ? try await self.nextPage() : .walked, recorded)
    }

    func finish(_ ending: FanOutEnding) async throws {
        try await self.unlock()
        switch ending {
        case .done(let status):
            try await self.outbox.release(self.claim, status: status, on: self.connection)
        case .putBack(let delay, let resettingAttempts):
            try await self.outbox.release(self.claim, status: .pending, retryAfter: delay, resetAttempts: resettingAttempts, on: self.connection)
        case .givenUp(let letter):
            try await self.outbox.release(self.claim, status: .failed, on: self.connection)
            try await self.outbox.keep([letter], appID: self.claim.appID, on: self.connection)
        }
    }

    /// After the channel: the followers go to slices if there are too many (a claim of the update itself), else the
    /// walk makes way for its pushes (``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``) and reads its first
    /// page.
    private func afterChannel() async throws -> FanOutStep {
        if self.claim.slice == nil, try await self.outbox.split(self.claim, size: self.limits.sliceSize, on: self.connection) { return .split }
        self.busy = try await self.outbox.clearOlderOwed(
            .activity,
            ofFeed: self.claim.feedID,
            after: self.claim.cursor,
            through: self.claim.upperBound,
            upTo: self.claim.updateID,
            on: self.connection
        )
        return try await self.nextPage()
    }

    /// The page after the checkpoint: a start's audience, each device admitted; or the followers, under the feed's
    /// send lock, held until the page is recorded.
    private func nextPage() async throws -> FanOutStep {
        let page: FanOutPage
        if self.claim.event == .start {
            let members = try await self.outbox.audience(of: self.claim, limit: self.limits.pageSize, on: self.connection)
            let admitted = try await self.outbox.admitStarts(
                members.map(\.deviceID),
                of: self.claim,
                budget: self.limits.startBudget,
                on: self.connection
            )
            page = .audience(members, admitted: admitted)
        } else {
            try await self.outbox.lockShared(SendLocks.feedNamespace, [self.claim.feedID], on: self.connection)
            self.holdsSendLock = true
            page = .followers(
                try await self.outbox.followers(
                    ofFeed: self.claim.feedID,
                    after: self.claim.cursor,
                    through: self.claim.upperBound,
                    limit: self.limits.pageSize,
                    on: self.connection
                )
            )
        }
        self.pageRowIDs = page.rowIDs
        return .page(page)
    }

    /// Releases the feed's send lock, if this session holds it.
    func unlock() async throws {
        guard self.holdsSendLock else { return }
        self.holdsSendLock = false
        try await self.outbox.unlockShared(SendLocks.feedNamespace, [self.claim.feedID], on: self.connection)
    }

    private func owe(_ owed: [OwedPush]) async throws {
        try await self.outbox.owe(
            owed.map(\.target),
            delays: owed.map(\.delay),
            updateID: self.claim.updateID,
            appID: self.claim.appID,
            on: self.connection
        )
    }
}
