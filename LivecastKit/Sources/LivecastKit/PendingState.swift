import Foundation

/// What a client keeps across launches: the device id, the reports not yet acknowledged (in the order they were
/// made), and what Livecast last acknowledged of each subject, so an unchanged token is never sent twice.
struct PendingState: Codable, Equatable {
    /// A report waiting for Livecast's acknowledgement.
    struct Pending: Codable, Equatable {
        /// Its place in the order of all reports.
        let sequence: Int
        let report: LivecastReport
        /// When it was made: it is dropped once older than the retry policy's report lifetime.
        let madeAt: Date
    }

    /// What Livecast acknowledged last of a subject, and when.
    struct Acknowledged: Codable, Equatable {
        let content: LivecastReport.Content
        let at: Date
    }

    /// How long an activity's acknowledgements are remembered: longer than an activity can last (12 hours).
    static let activityMemory: TimeInterval = 24 * 3600

    var deviceID: String
    var nextSequence = 0
    var pending: [Pending] = []
    /// By ``LivecastReport/subject``.
    var acknowledged: [String: Acknowledged] = [:]

    init(deviceID: String) { self.deviceID = deviceID }

    /// Queues a report unless it would tell Livecast nothing new: the same as the last report of its subject (pending,
    /// else acknowledged), a registration of an activity already reported over, or one without a token or channel
    /// of an activity already reported.
    /// - Returns: Whether it was queued.
    mutating func enqueue(_ report: LivecastReport, now: Date) -> Bool {
        if let latest = self.latest(of: report.subject) {
            if latest == report.content { return false }
            if LivecastReport(latest).endsActivity, !report.endsActivity { return false }
            if case .activity(_, _, _, nil, nil, _) = report.content, case .activity = latest { return false }
        }
        self.pending.append(Pending(sequence: self.nextSequence, report: report, madeAt: now))
        self.nextSequence += 1
        return true
    }

    /// The last content of a subject: its last pending report, else what was acknowledged.
    func latest(of subject: String) -> LivecastReport.Content? {
        self.pending.last { $0.report.subject == subject }?.report.content ?? self.acknowledged[subject]?.content
    }

    /// Removes a report that is done with, and remembers it when Livecast acknowledged it. An acknowledged
    /// unregistration of the device forgets everything acknowledged before it: Livecast no longer has any of it.
    mutating func finish(sequence: Int, acknowledged: Bool, now: Date) {
        guard let index = self.pending.firstIndex(where: { $0.sequence == sequence }) else { return }
        let report = self.pending.remove(at: index).report
        guard acknowledged else { return }
        if report.lane == .device {
            self.acknowledged = [:]
        } else {
            self.acknowledged[report.subject] = Acknowledged(content: report.content, at: now)
        }
    }

    /// Forgets the acknowledgements of activities older than ``activityMemory``, so the file stays small.
    mutating func forgetOldActivities(now: Date) {
        self.acknowledged = self.acknowledged.filter { subject, acknowledged in
            !subject.hasPrefix("activity/") || now.timeIntervalSince(acknowledged.at) < Self.activityMemory
        }
    }

    /// Drops the reports not yet in flight, for an unregistration of the device that makes them moot.
    /// - Returns: The dropped reports.
    mutating func dropAll(except inFlight: Set<Int>) -> [LivecastReport] {
        let dropped = self.pending.filter { !inFlight.contains($0.sequence) }
        self.pending.removeAll { !inFlight.contains($0.sequence) }
        return dropped.map(\.report)
    }
}
