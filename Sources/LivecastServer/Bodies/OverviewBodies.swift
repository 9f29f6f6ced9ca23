import LivecastCore
import LivecastStore

/// `GET /v1/key`: the key a request was made with.
struct CallerBody: Encodable {
    let keyId: Int64
    let bundleId: String
    /// `backend`, `operator` or `admin`.
    let role: String
}

/// `GET /v1/apps/{bundleId}/overview`.
struct OverviewBody: Encodable {
    let bundleId: String
    let environment: String
    let outbox: Outbox
    /// The last hour's pushes in twelve five-minute buckets, oldest first.
    let lastHour: [Bucket]
    /// The last hour's failed pushes by APNs' reason.
    let failedByReason: [String: Int]
    let channels: Channels
    /// Dead letters not replayed.
    let deadLetters: Int
    let reaper: Reaper
    /// What is wrong: readiness checks that fail, a held sending, an unusable signing key.
    let problems: [String]

    struct Outbox: Encodable {
        /// Updates waiting or being sent.
        let depth: Int
        /// How long the oldest has waited, in seconds; absent when the outbox is empty.
        let oldestAgeSeconds: Int64?
        /// Scheduled sends not yet due.
        let scheduled: Int
    }

    struct Bucket: Encodable {
        /// The bucket's start (UNIX seconds).
        let start: Int64
        let sent: Int64
        let failed: Int64
    }

    struct Channels: Encodable {
        let used: Int
        /// APNs' cap (10,000 unless configured lower).
        let limit: Int
    }

    struct Reaper: Encodable {
        /// When it last passed over the app (UNIX seconds); absent before its first pass.
        let lastRunAt: Int64?
        let summary: String?
    }

    init(_ overview: AppOverview, channelLimit: Int, problems: [String]) {
        self.bundleId = overview.bundleID
        self.environment = overview.environment
        self.outbox = Outbox(depth: overview.outboxDepth, oldestAgeSeconds: overview.outboxOldestAge?.wholeSeconds, scheduled: overview.scheduled)
        self.lastHour = overview.lastHour.map { Bucket(start: $0.start, sent: $0.sent, failed: $0.failed) }
        self.failedByReason = overview.failedByReason
        self.channels = Channels(used: overview.channelsUsed, limit: channelLimit)
        self.deadLetters = overview.deadLetters
        self.reaper = Reaper(lastRunAt: overview.reapedAt, summary: overview.reapSummary)
        self.problems = problems
    }
}
