import LivecastCore
import LivecastStore

/// A request body that says an update or an end.
protocol UpdateContentBody: Decodable {
    /// When to send it (UNIX seconds, at most 7 days ahead); at once when absent or past.
    var sendAt: Int? { get }

    /// What the body says, its dates checked against the server's clock (`now`, UNIX seconds).
    /// - Throws: ``APIError`` `invalid` naming the field.
    func content(now: Int) throws -> UpdateContent
}

/// `POST /v1/apps/{bundleId}/activities/{activityId}/updates` and `POST /v1/apps/{bundleId}/feeds/{feedKey}/updates`.
struct UpdateBody: UpdateContentBody {
    /// The `ContentState`, passed to the device as given.
    let contentState: RawJSON
    /// UNIX seconds; the server's time when absent.
    let timestamp: Int?
    /// UNIX seconds, after `timestamp`, in the future, and at most 9 hours after `timestamp`.
    let staleDate: Int?
    let alert: AlertBody?
    /// 5 or 10; 10 with an alert, else 5, when absent.
    let priority: Int?
    let relevanceScore: Double?
    let sendAt: Int?

    func content(now: Int) throws -> UpdateContent {
        try LivecastAPI.checkDates(timestamp: self.timestamp, staleDate: self.staleDate, now: now)
        try InputLimits.checkDateWindow(timestamp: self.timestamp, staleDate: self.staleDate, now: now)
        var content = UpdateContent(event: .update, contentState: self.contentState, timestamp: self.timestamp)
        content.staleDate = self.staleDate
        content.alert = self.alert?.alert
        content.priority = self.priority
        content.relevanceScore = self.relevanceScore
        return content
    }
}

/// `POST /v1/apps/{bundleId}/activities/{activityId}/end` and `POST /v1/apps/{bundleId}/feeds/{feedKey}/end`.
struct EndBody: UpdateContentBody {
    let contentState: RawJSON?
    let timestamp: Int?
    /// When the ended activity leaves the Lock Screen (UNIX seconds); clamped to 4 hours after the end, refused more
    /// than a day after it.
    let dismissalDate: Int?
    let sendAt: Int?

    func content(now: Int) throws -> UpdateContent {
        try LivecastAPI.checkDates(timestamp: self.timestamp, staleDate: nil, now: now)
        try InputLimits.checkDateWindow(timestamp: self.timestamp, staleDate: nil, dismissalDate: self.dismissalDate, now: now)
        var content = UpdateContent(event: .end, contentState: self.contentState, timestamp: self.timestamp)
        content.dismissalDate = self.dismissalDate
        return content
    }
}

/// `202` for an accepted update or end, once it is stored.
struct AcceptedBody: Codable {
    let updateId: Int64
    /// The timestamp it goes out with.
    let timestamp: Int
    let priority: Int
    /// Present and `true` when the app's hourly priority-10 budget was spent, so it goes out at priority 5.
    let priorityDowngraded: Bool?
    /// Whether it came in the same second as the target's last update: it replaced that one (never sent) if it was
    /// still waiting, else it goes out at the next second.
    let coalesced: Bool
    /// Present and `true` when `dismissalDate` was brought back to 4 hours after the end.
    let dismissalDateClamped: Bool?
    /// Notes for the caller, such as the clamping.
    let warnings: [String]?

    init(_ accepted: AcceptedUpdate) {
        self.updateId = accepted.updateID
        self.timestamp = accepted.timestamp
        self.priority = accepted.priority
        self.priorityDowngraded = accepted.priorityDowngraded ? true : nil
        self.coalesced = accepted.coalesced
        self.dismissalDateClamped = accepted.dismissalDateClamped ? true : nil
        var warnings: [String] = []
        if accepted.dismissalDateClamped { warnings.append("dismissalDate was later than 4 hours after the end; it was clamped") }
        if accepted.priorityDowngraded { warnings.append("the app's hourly priority-10 budget is spent; sent at priority 5") }
        self.warnings = warnings.isEmpty ? nil : warnings
    }
}

/// `202` for a start, update or end kept until its `sendAt`.
struct ScheduledBody: Encodable {
    /// Its id: `GET …/updates/{updateId}` follows it, `DELETE` cancels it until it is sent.
    let updateId: Int64
    let status = "scheduled"
    /// When it is checked and sent (UNIX seconds).
    let sendAt: Int
}
