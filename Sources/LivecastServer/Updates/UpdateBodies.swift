import LivecastCore
import LivecastStore

/// A request body that says an update or an end.
protocol UpdateContentBody: Decodable {
    /// When to send it (UNIX seconds, at most 7 days ahead); at once when absent or past.
    var sendAt: Int? { get }
    /// Its dates, for ``DateChecks``.
    var dates: DateChecks.Dates { get }
    /// What the body says, field for field.
    var content: UpdateContent { get }
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

    var dates: DateChecks.Dates { DateChecks.Dates(timestamp: self.timestamp, staleDate: self.staleDate) }

    var content: UpdateContent {
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

    var dates: DateChecks.Dates { DateChecks.Dates(timestamp: self.timestamp, dismissalDate: self.dismissalDate) }

    var content: UpdateContent {
        var content = UpdateContent(event: .end, contentState: self.contentState, timestamp: self.timestamp)
        content.dismissalDate = self.dismissalDate
        return content
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
