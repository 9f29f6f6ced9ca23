import APNsEmulator
import Foundation

/// The game night's verdict: the wire judged by ``WireJudge`` and checked against what the API answered
/// (``GameNightLedger``), with how soon each update reached every follower.
struct GameNightReport: Sendable {
    /// What ``WireJudge/judge(_:)`` found.
    var verdict: WireVerdict
    /// Current followers (their token neither answering 410 nor rotated away) whose last accepted push is not the
    /// end with the final content; and whether the channel's is.
    var followersNotFinal: [String]
    var isChannelFinal: Bool
    /// Pushes accepted by a rotated-away token that arrived after the rotation's call was answered.
    var rotatedOldTokenAfter: [WireRecord]
    /// Seconds from each update's 202 until each current follower (and the channel) accepted it or a newer one,
    /// over every (update, target) pair, shortest first; negative delays (accepted before the 202 was read) count as 0.
    var convergence: [Double]
    /// (update, target) pairs that never converged.
    var convergenceMissing: Int
    /// The longest time from the end's 202 until a target accepted it; `nil` when a target never did.
    var endConvergence: Double?
    /// The calls that failed after their retries.
    var registrationsFailed: Int
    var updatesFailed: Int
    var errors: Int
    var firstError: String?
    var clientRetries: Int
    /// Followers registered (late fans included), and updates accepted (the end aside).
    var followers: Int
    var updates: Int
    /// The limit on convergence, if any.
    var maxConvergence: Double?

    /// Judges `records` against `ledger`.
    init(
        records: [WireRecord],
        ledger: GameNightLedger,
        outcome: GameNightGame.Outcome,
        clientRetries: Int,
        maxConvergence: Double?
    ) {
        let verdict = WireJudge.judge(records)
        self.verdict = verdict
        let followers = ledger.followers
        let current = followers.filter { !$0.isUnregistered }
        let isFinal = { (record: WireRecord?) in Self.isFinal(record, contentState: outcome.finalContentState) }
        self.followersNotFinal = current.map { "device:\($0.token)" }.filter { !isFinal(verdict.lastAccepted[$0]) }
        self.isChannelFinal = isFinal(verdict.lastAccepted[outcome.channelTarget])

        var rotatedAt: [String: Double] = [:]
        for follower in followers {
            for rotation in follower.rotatedAway { rotatedAt["device:\(rotation.token)"] = rotation.at }
        }
        self.rotatedOldTokenAfter = records.filter { record in
            guard record.isAccepted, let at = rotatedAt[record.target] else { return false }
            return record.arrivedAt > at
        }

        // Per target, only the acceptances that raised its newest timestamp can be its earliest acceptance of a
        // timestamp: WireJudge.convergence reads those alone, newest timestamps first, so that each update reads
        // only the records that can answer it.
        let acceptances = Self.newestRaising(records).sorted { ($0.timestamp ?? 0) > ($1.timestamp ?? 0) }
        let targetsSince = current.map { ("device:\($0.token)", $0.since) }
        func convergence(timestamp: Int, since: Double) -> WireConvergence {
            var targets: Set<String> = [outcome.channelTarget]
            for (target, registered) in targetsSince where registered < since { targets.insert(target) }
            let reach = Self.prefixCount(acceptances) { ($0.timestamp ?? 0) >= timestamp }
            return WireJudge.convergence(Array(acceptances[..<reach]), timestamp: timestamp, since: since, targets: targets)
        }
        var delays: [Double] = []
        var missing = 0
        for update in ledger.updates {
            let result = convergence(timestamp: update.timestamp, since: update.answeredAt)
            delays += result.delays.map { max(0, $0) }
            missing += result.missing.count
        }
        self.convergence = delays.sorted()
        self.convergenceMissing = missing
        if let end = ledger.end {
            let result = convergence(timestamp: end.timestamp, since: end.answeredAt)
            self.endConvergence = result.isComplete ? result.maximum.map { max(0, $0) } : nil
        } else {
            self.endConvergence = nil
        }

        self.registrationsFailed = ledger.failed(.registration)
        self.updatesFailed = ledger.failed(.update)
        self.errors = ledger.failedCalls
        self.firstError = ledger.firstError
        self.clientRetries = clientRetries
        self.followers = followers.count
        self.updates = ledger.updates.count
        self.maxConvergence = maxConvergence
    }

    /// The nearest-rank percentile of ``convergence``, or `nil` when it is empty.
    func percentile(_ p: Double) -> Double? {
        guard !self.convergence.isEmpty else { return nil }
        let rank = Int((p / 100 * Double(self.convergence.count)).rounded(.up))
        return self.convergence[min(max(rank, 1), self.convergence.count) - 1]
    }

    /// Why the run fails; empty when it passes.
    var failures: [String] {
        var failures: [String] = []
        func check(_ count: Int, _ what: String) {
            if count > 0 { failures.append("\(count) \(what)") }
        }
        check(self.verdict.orderingViolations.count, "ordering violations")
        check(self.verdict.sentAfterUnregistered.count, "pushes sent to a token after its 410")
        check(self.verdict.sentAfterEnd.count, "pushes sent after an accepted end")
        check(self.followersNotFinal.count, "current followers whose last accepted push is not the final end")
        if !self.isChannelFinal { failures.append("the channel's last accepted push is not the final end") }
        check(self.rotatedOldTokenAfter.count, "pushes accepted by a rotated-away token after its rotation was answered")
        check(self.registrationsFailed, "registrations failed after retries")
        check(self.updatesFailed, "updates failed after retries")
        check(self.errors - self.registrationsFailed - self.updatesFailed, "other calls failed after retries")
        if let limit = self.maxConvergence {
            let longest = max(self.convergence.last ?? 0, self.endConvergence ?? .infinity)
            if longest > limit { failures.append("convergence took \(Self.seconds(longest)) s, over --max-convergence \(Self.seconds(limit))") }
        }
        return failures
    }

    /// Prints the summary line (standard output) after the details (standard error).
    func print(outcome: GameNightGame.Outcome) {
        var lines: [String] = []
        func relative(_ time: Double) -> String { "+\(Self.seconds(time - outcome.startedAt)) s" }
        func show(_ title: String, _ violations: [WireViolation]) {
            guard !violations.isEmpty else { return }
            lines.append("\(title): \(violations.count), the first:")
            for violation in violations.prefix(5) {
                lines.append("  \(violation) (\(violation.record.event ?? "-") at \(relative(violation.record.arrivedAt)))")
            }
        }
        show("ordering violations", self.verdict.orderingViolations)
        show("sent after 410", self.verdict.sentAfterUnregistered)
        show("sent after end", self.verdict.sentAfterEnd)
        if !self.followersNotFinal.isEmpty || !self.isChannelFinal {
            lines.append(
                "not showing the final end: \(self.followersNotFinal.count) followers\(self.isChannelFinal ? "" : " and the channel"), the first:"
            )
            for target in (self.isChannelFinal ? [] : [outcome.channelTarget]) + self.followersNotFinal.prefix(5) {
                let last = self.verdict.lastAccepted[target]
                let shown = last.map {
                    "\($0.event ?? "-") \($0.timestamp.map(String.init) ?? "-") \($0.contentState ?? "-") at \(relative($0.arrivedAt))"
                }
                lines.append("  \(target): last accepted \(shown ?? "nothing")")
            }
        }
        if !self.rotatedOldTokenAfter.isEmpty {
            lines.append("accepted by a rotated-away token after the rotation: \(self.rotatedOldTokenAfter.count), the first:")
            for record in self.rotatedOldTokenAfter.prefix(5) {
                let timestamp = record.timestamp.map(String.init) ?? "-"
                lines.append("  #\(record.sequence) \(record.target): \(record.event ?? "-") \(timestamp) at \(relative(record.arrivedAt))")
            }
        }
        if self.convergenceMissing > 0 { lines.append("convergence: \(self.convergenceMissing) (update, target) pairs never converged") }
        for failure in self.failures { lines.append("FAIL: \(failure)") }
        for line in lines { FileHandle.standardError.write(Data("gamenight: \(line)\n".utf8)) }

        Summary.print(
            "gamenight",
            [
                ("followers", String(self.followers)),
                ("updates", String(self.updates)),
                ("requests", String(self.verdict.requests)),
                ("accepted", String(self.verdict.accepted)),
                ("ordering_violations", String(self.verdict.orderingViolations.count)),
                ("sent_after_410", String(self.verdict.sentAfterUnregistered.count)),
                ("sent_after_end", String(self.verdict.sentAfterEnd.count)),
                ("wasted", String(self.verdict.wastedPushes)),
                ("convergence_p50", self.percentile(50).map(Self.seconds) ?? "n/a"),
                ("convergence_p99", self.percentile(99).map(Self.seconds) ?? "n/a"),
                ("convergence_max", self.convergence.last.map(Self.seconds) ?? "n/a"),
                ("end_p100", self.endConvergence.map(Self.seconds) ?? "n/a"),
                ("followers_not_final", String(self.followersNotFinal.count)),
                ("channel_final", self.isChannelFinal ? "yes" : "no"),
                ("rotated_old_token_after", String(self.rotatedOldTokenAfter.count)),
                ("registrations_failed", String(self.registrationsFailed)),
                ("updates_failed", String(self.updatesFailed)),
                ("client_retries", String(self.clientRetries)),
                ("verdict", self.failures.isEmpty ? "pass" : "fail"),
            ],
            errors: self.errors,
            firstError: self.firstError
        )
    }

    /// Whether `record` is the end with `contentState`.
    private static func isFinal(_ record: WireRecord?, contentState: [String: Int]) -> Bool {
        guard let record, record.event == "end", let shown = record.contentState,
            let decoded = try? JSONDecoder().decode([String: Int].self, from: Data(shown.utf8))
        else { return false }
        return decoded == contentState
    }

    /// Per target, the accepted records that raised its newest timestamp, in the order they were accepted (answered,
    /// or arrived when no answer time is known).
    private static func newestRaising(_ records: [WireRecord]) -> [WireRecord] {
        var newest: [String: Int] = [:]
        var raising: [WireRecord] = []
        for record in records.filter({ $0.isAccepted && $0.timestamp != nil }).sorted(by: {
            ($0.answeredAt ?? $0.arrivedAt) < ($1.answeredAt ?? $1.arrivedAt)
        }) {
            guard let timestamp = record.timestamp, timestamp > newest[record.target] ?? .min else { continue }
            newest[record.target] = timestamp
            raising.append(record)
        }
        return raising
    }

    /// How many leading elements satisfy `predicate` (which holds for a prefix): a binary search.
    private static func prefixCount(_ elements: [WireRecord], _ predicate: (WireRecord) -> Bool) -> Int {
        var (low, high) = (0, elements.count)
        while low < high {
            let middle = (low + high) / 2
            if predicate(elements[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Seconds with three decimals.
    static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value)
    }
}
