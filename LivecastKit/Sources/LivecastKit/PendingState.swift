import Foundation

/// What a client keeps across launches: the device id, the reports not yet acknowledged (in the order they were
/// made), and what Livecast last acknowledged of each subject and when, so an unchanged token is not sent twice
/// until it is due again (``LivecastClient/Configuration/reReportInterval``).
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
        /// When Livecast last acknowledged it. A file written before this was kept has none: it reads as
        /// `distantPast`, so the subject is due again at once.
        let at: Date

        init(content: LivecastReport.Content, at: Date) {
            self.content = content
            self.at = at
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.content = try container.decode(LivecastReport.Content.self, forKey: .content)
            self.at = try container.decodeIfPresent(Date.self, forKey: .at) ?? .distantPast
        }
    }

    /// The user the device's registrations are bound to, as the app last said (``LivecastClient/identify(userID:assertion:)``
    /// or ``LivecastClient/forgetUser()``), so that a registration made at the next launch, before the app says it
    /// again, does not unbind the user in Livecast.
    enum BoundUser: Codable, Equatable {
        case user(String)
        case nobody
    }

    /// How long an activity's acknowledgements are remembered: longer than an activity can last (12 hours).
    static let activityMemory: TimeInterval = 24 * 3600

    var deviceID: String
    var nextSequence = 0
    var pending: [Pending] = []
    /// By ``LivecastReport/subject``.
    var acknowledged: [String: Acknowledged] = [:]
    /// `nil` in a file from before it was kept: ``rememberedUser`` then reads the acknowledged registrations.
    var boundUser: BoundUser?

    init(deviceID: String) { self.deviceID = deviceID }

    /// Queues a report unless it would tell Livecast nothing new: the same as the last report of its subject
    /// (pending, else acknowledged less than `reReportInterval` ago), a registration of an activity already reported
    /// over, or one without a token or channel of an activity already reported.
    /// - Returns: Whether it was queued.
    mutating func enqueue(_ report: LivecastReport, now: Date, reReportInterval: TimeInterval = .infinity) -> Bool {
        let latest: LivecastReport.Content?
        if let pending = self.pending.last(where: { $0.report.subject == report.subject }) {
            if pending.report.content == report.content { return false }
            latest = pending.report.content
        } else if let acknowledged = self.acknowledged[report.subject] {
            if acknowledged.content == report.content, now.timeIntervalSince(acknowledged.at) < reReportInterval { return false }
            latest = acknowledged.content
        } else {
            latest = nil
        }
        if let latest {
            if LivecastReport(latest).endsActivity, !report.endsActivity { return false }
            // A registration without a token or channel of an activity already reported, unless it changes only
            // the user or whether the activity is pending.
            if case .activity(_, _, _, nil, nil, _, _, let pending) = report.content, case .activity(_, _, _, _, _, _, _, let latestPending) = latest,
                latest.withUser(nil) != report.content.withUser(nil), (pending ?? false) == (latestPending ?? false)
            {
                return false
            }
        }
        self.pending.append(Pending(sequence: self.nextSequence, report: report, madeAt: now))
        self.nextSequence += 1
        return true
    }

    /// The last content of a subject: its last pending report, else what was acknowledged.
    func latest(of subject: String) -> LivecastReport.Content? {
        self.pending.last { $0.report.subject == subject }?.report.content ?? self.acknowledged[subject]?.content
    }

    /// The latest registration of every subject whose latest report is one (push-to-start tokens, and activities not
    /// reported over), in subject order.
    var liveRegistrations: [LivecastReport.Content] {
        let subjects = Set(self.acknowledged.keys).union(self.pending.map(\.report.subject))
        return subjects.sorted().compactMap { self.latest(of: $0) }.filter(\.isRegistration)
    }

    /// The registrations Livecast acknowledged at least `interval` ago and that nothing waits to replace: what must
    /// be reported again so that Livecast keeps them (it expires a push-to-start token 30 days after its last
    /// registration).
    func dueReReports(now: Date, interval: TimeInterval) -> [LivecastReport.Content] {
        let waiting = Set(self.pending.map(\.report.subject))
        return self.acknowledged.sorted { $0.key < $1.key }.compactMap { subject, acknowledged in
            guard acknowledged.content.isRegistration, !waiting.contains(subject), now.timeIntervalSince(acknowledged.at) >= interval else {
                return nil
            }
            return acknowledged.content
        }
    }

    /// The activities of an attributes type whose latest report registers them (not reported ended or dismissed).
    func knownActivities(attributesType: String) -> [String] {
        self.liveRegistrations.compactMap { content in
            guard case .activity(let id, let type, _, _, _, _, _, _) = content, type == attributesType else { return nil }
            return id
        }
    }

    /// The user the device's registrations were last bound to: the one the app last named, or, in a file from before
    /// that was kept, the user of the registrations Livecast acknowledged.
    var rememberedUser: String? {
        switch self.boundUser {
        case .user(let userID): userID
        case .nobody: nil
        case nil: self.acknowledged.sorted { $0.key < $1.key }.lazy.compactMap { LivecastReport($0.value.content).userID }.first
        }
    }

    /// Whether a report made after `item` waits in its lane: it says the newer word on the same subject.
    func hasLaterReport(than item: Pending) -> Bool {
        self.pending.contains { $0.sequence > item.sequence && $0.report.lane == item.report.lane }
    }

    /// Removes a report that is done with, and remembers it when Livecast acknowledged it (as `sent`, when what went
    /// out differs from the report: a registration sent without its user). An acknowledged unregistration of the
    /// device forgets everything acknowledged before it: Livecast no longer has any of it.
    mutating func finish(sequence: Int, acknowledged: Bool, sent: LivecastReport.Content? = nil, now: Date) {
        guard let index = self.pending.firstIndex(where: { $0.sequence == sequence }) else { return }
        let report = self.pending.remove(at: index).report
        guard acknowledged else { return }
        if report.lane == .device {
            self.acknowledged = [:]
        } else {
            self.acknowledged[report.subject] = Acknowledged(content: sent ?? report.content, at: now)
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
