import Hummingbird
import LivecastCore
import LivecastStore

/// `GET /v1/apps/{bundleId}/overview`: the store's ``AppOverview`` with what this server adds, APNs' channel cap and
/// the problems it sees.
struct OverviewBody: ResponseEncodable {
    let overview: AppOverview
    /// APNs' cap (10,000 unless configured lower).
    let channelLimit: Int
    /// What is wrong: readiness checks that fail, a held sending, an unusable signing key.
    let problems: [String]

    private enum CodingKeys: String, CodingKey {
        case bundleId, environment, outbox, lastHour, failedByReason, channels, deadLetters, reaper, starts, problems
    }

    /// The members of `outbox`, `channels` and `reaper`.
    private enum PartKeys: String, CodingKey {
        case depth, oldestAgeSeconds, scheduled, used, limit, lastRunAt, summary
    }

    /// `outbox`: updates waiting or being sent, how long the oldest has waited (seconds; absent when it is empty) and
    /// the scheduled sends not yet due. `lastHour`: twelve five-minute buckets, oldest first. `channels`: used
    /// against the cap. `deadLetters`: not replayed. `reaper`: its last pass over the app (absent before the first).
    /// `starts`: the last day's feed starts, those whose registration timeout passed, and those confirmed in time.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.overview.bundleID, forKey: .bundleId)
        try container.encode(self.overview.environment, forKey: .environment)
        var outbox = container.nestedContainer(keyedBy: PartKeys.self, forKey: .outbox)
        try outbox.encode(self.overview.outboxDepth, forKey: .depth)
        try outbox.encodeIfPresent(self.overview.outboxOldestAge?.wholeSeconds, forKey: .oldestAgeSeconds)
        try outbox.encode(self.overview.scheduled, forKey: .scheduled)
        try container.encode(self.overview.lastHour, forKey: .lastHour)
        try container.encode(self.overview.failedByReason, forKey: .failedByReason)
        var channels = container.nestedContainer(keyedBy: PartKeys.self, forKey: .channels)
        try channels.encode(self.overview.channelsUsed, forKey: .used)
        try channels.encode(self.channelLimit, forKey: .limit)
        try container.encode(self.overview.deadLetters, forKey: .deadLetters)
        var reaper = container.nestedContainer(keyedBy: PartKeys.self, forKey: .reaper)
        try reaper.encodeIfPresent(self.overview.reapedAt, forKey: .lastRunAt)
        try reaper.encodeIfPresent(self.overview.reapSummary, forKey: .summary)
        try container.encode(self.overview.starts, forKey: .starts)
        try container.encode(self.problems, forKey: .problems)
    }
}
