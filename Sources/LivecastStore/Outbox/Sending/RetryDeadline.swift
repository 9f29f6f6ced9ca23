import LivecastCore

/// When the outbox gives up a push APNs keeps asking to retry later (429, 5xx, a connection lost before the
/// answer): ``period`` after it was first owed, bounded by what a Live Activity can still show. What is still
/// undelivered then becomes a dead letter.
package struct RetryDeadline: Sendable {
    /// How long a push is retried after it was first owed (`--retry-deadline`).
    package var period: Duration
    /// How long an activity stays active (`activity-lifetime`, ActivityKit's 8 hours).
    package var activityLifetime: Duration

    package init(period: Duration, activityLifetime: Duration = .seconds(8 * 3600)) {
        self.period = period
        self.activityLifetime = activityLifetime
    }

    /// SQL for when a push of an update to an activity is given up, counted from `since`: an update not later
    /// than the activity's lifetime (the system ends it then); an end not before the lifetime and 4 hours more (the
    /// longest it stays on the Lock Screen), so an end is never given up while the activity can still show.
    /// - Parameters: SQL expressions of the update's `event`, the activity's `started_at` and the start of the
    ///   retry period.
    func activitySQL(event: String, startedAt: String, since: String) -> String {
        let lifetime = self.activityLifetime.wholeSeconds
        return """
            CASE WHEN \(event) = \(LiveActivityEvent.end.sql) THEN greatest(\(since) + interval '\(self.period.wholeSeconds) seconds', \(startedAt) + interval '\(lifetime + 4 * 3600) seconds')
                 ELSE least(\(since) + interval '\(self.period.wholeSeconds) seconds', \(startedAt) + interval '\(lifetime) seconds') END
            """
    }

    /// SQL for when a push to a channel or a push-to-start token is given up, counted from `since`; a channel's
    /// end is kept for 12 hours, the longest its activities can show.
    func sql(event: String, since: String) -> String {
        """
        CASE WHEN \(event) = \(LiveActivityEvent.end.sql) THEN greatest(\(since) + interval '\(self.period.wholeSeconds) seconds', \(since) + interval '12 hours')
             ELSE \(since) + interval '\(self.period.wholeSeconds) seconds' END
        """
    }

    /// SQL for when a push of a target kind (`$kind`, an ``OwedTarget/Kind`` literal or SQL expression) is given
    /// up, counted from now: the activity's deadline for an activity, else the channel's and token's.
    func owedSQL(kind: String, event: String, activityStartedAt: String) -> String {
        """
        CASE WHEN \(kind) = \(OwedTarget.Kind.activity.sql)
             THEN \(self.activitySQL(event: event, startedAt: "coalesce(\(activityStartedAt), now())", since: "now()"))
             ELSE \(self.sql(event: event, since: "now()")) END
        """
    }
}
