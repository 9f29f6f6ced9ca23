import APNsEmulator

/// What one scale run's wire shows: every follower should have accepted the run's update exactly once, and nothing
/// else should have reached the wire. (At most one push per token in flight cannot be seen there.)
struct ScaleVerdict: Sendable {
    /// Followers of the run's feed.
    var followers: Int
    /// Followers that accepted the update.
    var reached: Int
    /// Pushes of the update to a follower that had already accepted it.
    var duplicates: Int
    /// Pushes not newer than what their token had already accepted (``WireJudge``'s ordering violations).
    var outOfOrder: Int
    /// Any other push: to a target that is no follower of the run, with other contents, or not answered `200`.
    var unexpected: Int
    /// When the first and the last follower's update arrived (wall clock, seconds since 1970).
    var firstArrival: Double?
    var lastArrival: Double?
    /// The first few pushes counted against the run, described.
    var examples: [String]

    /// What the update pushes carry.
    struct Update: Sendable {
        /// The 202's `timestamp`.
        var timestamp: Int
        /// The content state posted, as the wire log writes it (compact JSON with sorted keys).
        var contentState: String
    }

    /// Judges the wire `records` of run `run`, whose feed has `followers` followers, against `update`.
    init(records: [WireRecord], run: Int, followers: Int, update: Update) {
        let ordering = WireJudge.judge(records).orderingViolations
        let outOfOrder = Set(ordering.map(\.record.sequence))
        var arrivals = [Double?](repeating: nil, count: followers)
        var duplicates = 0
        var unexpected = 0
        var examples = ordering.prefix(3).map { "out of order: \($0)" }
        for record in records.sorted(by: { $0.sequence < $1.sequence }) where !outOfOrder.contains(record.sequence) {
            let index = ScaleFollowers.index(ofTarget: record.target, run: run).flatMap { $0 < followers ? $0 : nil }
            let isUpdate =
                record.isAccepted && record.event == "update" && record.timestamp == update.timestamp
                && record.contentState == update.contentState
            if let index, isUpdate {
                if arrivals[index] == nil {
                    arrivals[index] = record.arrivedAt
                    continue
                }
                duplicates += 1
                if examples.count < 6 { examples.append("duplicate: #\(record.sequence) \(record.target)") }
            } else {
                unexpected += 1
                if examples.count < 6 {
                    let what = "\(record.event ?? "-") \(record.timestamp.map(String.init) ?? "-") \(record.contentState ?? "-")"
                    examples.append("unexpected: #\(record.sequence) \(record.target): \(what), status \(record.status.map(String.init) ?? "none")")
                }
            }
        }
        let reachedAt = arrivals.compactMap { $0 }
        self.followers = followers
        self.reached = reachedAt.count
        self.duplicates = duplicates
        self.outOfOrder = ordering.count
        self.unexpected = unexpected
        self.firstArrival = reachedAt.min()
        self.lastArrival = reachedAt.max()
        self.examples = examples
    }

    /// Followers that never accepted the update.
    var lost: Int { self.followers - self.reached }

    /// Pushes counted against the run.
    var violations: Int { self.duplicates + self.outOfOrder + self.unexpected }

    /// Whether every follower accepted the update once and nothing else was pushed.
    var isClean: Bool { self.lost == 0 && self.violations == 0 }
}
