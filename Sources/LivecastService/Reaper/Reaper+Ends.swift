import LivecastCore
import LivecastStore
import Logging

/// The rules that end: stale activities and feeds, and activities nearing ActivityKit's 8-hour limit. Ends go
/// through the outbox (``ActivityUpdates``, ``FeedUpdates``), so the ordering rules hold and the dispatcher sends
/// them; the store's locks and states make a second reaper's attempt a no-op.
extension Reaper {
    /// The start before which a running activity nears the activity lifetime less the margin (UNIX seconds).
    func agingCutoff(_ now: Int) -> Double {
        Double(now) - (self.policy.activityLifetime - self.policy.lifetimeMargin).inSeconds
    }

    func endStaleActivities(_ app: Reaping.App, now: Int) async throws -> Int {
        let updates = ActivityUpdates(client: self.database, logger: self.logger)
        return try await self.forEachCandidate({
            try await self.reaping.staleActivities(app.id, now: now, staleGrace: self.policy.staleGrace, after: $0, limit: $1)
        }) { candidate in
            if candidate.state == .starting { return try await self.reaping.markEnded(activityID: candidate.id, by: .reaper) }
            var end = ActivityUpdates.Request(appID: app.id, activityKey: candidate.key, event: .end)
            end.content.dismissalDate = now + Int(self.policy.staleDismissalDelay.wholeSeconds)
            end.endedBy = .reaper
            return try await self.end(candidate, by: .reaper) { _ = try await updates.accept(end) }
        }
    }

    func endAgingActivities(_ app: Reaping.App, now: Int) async throws -> Int {
        let updates = ActivityUpdates(client: self.database, logger: self.logger)
        let dismissalDate = now + Int(ReaperPolicy.maximumDismissalDelay.wholeSeconds)
        let cutoff = self.agingCutoff(now)
        return try await self.forEachCandidate({
            try await self.reaping.agingActivities(app.id, now: now, staleGrace: self.policy.staleGrace, startedBefore: cutoff, after: $0, limit: $1)
        }) { candidate in
            // Nothing reaches an activity without a token alone, nor one follower of a channel: the device ends
            // them at 8 hours by itself; the store stops counting them as running.
            if candidate.state == .starting || (candidate.followsFeed && candidate.onChannel) {
                return try await self.reaping.markEnded(activityID: candidate.id, by: .lifetime)
            }
            if candidate.followsFeed {
                return try await self.end(candidate, by: .lifetime) {
                    _ = try await updates.endFollower(appID: app.id, activityKey: candidate.key, dismissalDate: dismissalDate)
                }
            }
            var end = ActivityUpdates.Request(appID: app.id, activityKey: candidate.key, event: .end)
            end.content.dismissalDate = dismissalDate
            end.endedBy = .lifetime
            return try await self.end(candidate, by: .lifetime) { _ = try await updates.accept(end) }
        }
    }

    func endStaleFeeds(_ app: Reaping.App, now: Int) async throws -> Int {
        let updates = FeedUpdates(client: self.database, logger: self.logger)
        var ended = 0
        var after: Int64 = 0
        while true {
            let page = try await self.reaping.staleFeeds(
                app.id,
                now: now,
                staleGrace: self.policy.staleGrace,
                after: after,
                limit: self.policy.batchSize
            )
            for (id, key) in page {
                after = id
                var end = FeedUpdates.Request(appID: app.id, feedKey: key, event: .end)
                end.content.dismissalDate = now + Int(self.policy.staleDismissalDelay.wholeSeconds)
                end.endedBy = .reaper
                do {
                    _ = try await updates.accept(end)
                    ended += 1
                } catch let error as StoreError where error.code == .feedEnded || error.code == .notFound {
                    continue  // another reaper, or the backend, ended it first
                }
            }
            if page.count < self.policy.batchSize { return ended }
        }
    }

    /// Walks a rule's candidates in keyset order, page by page. - Returns: how many `body` ended.
    private func forEachCandidate(
        _ page: (_ after: Int64, _ limit: Int) async throws -> [Reaping.Candidate],
        _ body: (Reaping.Candidate) async throws -> Bool
    ) async throws -> Int {
        var ended = 0
        var after: Int64 = 0
        while true {
            let candidates = try await page(after, self.policy.batchSize)
            for candidate in candidates {
                after = candidate.id
                if try await body(candidate) { ended += 1 }
            }
            if candidates.count < self.policy.batchSize { return ended }
        }
    }

    /// Accepts an end by the rule `endedBy`. - Returns: whether it was accepted; `false` when the activity ended
    /// meanwhile.
    private func end(_ candidate: Reaping.Candidate, by endedBy: EndedBy, _ accept: () async throws -> Void) async throws -> Bool {
        do {
            try await accept()
            return true
        } catch let error as StoreError {
            switch error.code {
            case .activityEnded, .notFound:
                return false  // another reaper, the backend or its feed's end got there first
            case .channelRetired:
                return try await self.reaping.markEnded(activityID: candidate.id, by: endedBy)  // nothing can reach it
            default:
                self.logger.warning("the reaper could not end an activity", metadata: ["activity": "\(candidate.key)", "error": "\(error)"])
                return false
            }
        }
    }
}
