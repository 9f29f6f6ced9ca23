import LivecastCore

/// Every rule the server's clock sets on the dates of a start, update or end, applied once a request (as of the
/// time it is posted, or of its `sendAt` when it is scheduled), in this order: a timestamp must be positive; a stale
/// date must not be past; a timestamp must be at most ``maximumClockSkew`` ahead; a stale date must come at most
/// ``maximumStaleDelay`` and a dismissal date from 0 to ``maximumDismissalDelay`` after the timestamp (the activity's
/// possible life). The order of updates and the dismissal clamp are the store's rules, on the database's clock.
struct DateChecks: Sendable {
    /// A `staleDate` is at most 9 hours (an activity's 8-hour life and an hour) after the update's timestamp.
    static let maximumStaleDelay = 9 * 3600
    /// A `dismissalDate` is at most a day after the end's timestamp (and is then clamped to 4 hours).
    static let maximumDismissalDelay = 24 * 3600

    /// The dates a request gives, UNIX seconds; `nil` for those it does not.
    struct Dates {
        var timestamp: Int?
        var staleDate: Int?
        var dismissalDate: Int?
    }

    /// How far ahead of the server's clock a timestamp may be (``LivecastAPI/Configuration/maximumClockSkew``).
    let maximumClockSkew: Duration

    /// Applies every rule to `dates` as of `now` (UNIX seconds).
    /// - Throws: ``APIError`` `422 invalid` naming the field, or `timestampTooFarAhead`.
    func check(_ dates: Dates, now: Int) throws {
        if let timestamp = dates.timestamp, timestamp <= 0 {
            throw APIError.invalid("timestamp must be positive UNIX seconds", field: "timestamp")
        }
        if let staleDate = dates.staleDate, staleDate <= now {
            throw APIError.invalid("staleDate is in the past", field: "staleDate")
        }
        try Self.checkWindow(dates, now: now)
        if let timestamp = dates.timestamp, timestamp > now + Int(self.maximumClockSkew.wholeSeconds) {
            throw APIError.timestampTooFarAhead(maximumSkew: self.maximumClockSkew)
        }
    }

    /// The activity's possible life: from the timestamp (`now` when none is given), at most ``maximumStaleDelay`` to
    /// the stale date and ``maximumDismissalDelay`` to the dismissal date.
    private static func checkWindow(_ dates: Dates, now: Int) throws {
        let base = dates.timestamp ?? now
        if let staleDate = dates.staleDate, staleDate > Self.saturating(base, plus: Self.maximumStaleDelay) {
            throw APIError.invalid("staleDate is more than \(Self.maximumStaleDelay / 3600) hours after the timestamp", field: "staleDate")
        }
        if let dismissalDate = dates.dismissalDate, dismissalDate < 0 || dismissalDate > Self.saturating(base, plus: Self.maximumDismissalDelay) {
            throw APIError.invalid(
                "dismissalDate must be UNIX seconds at most \(Self.maximumDismissalDelay / 3600) hours after the timestamp",
                field: "dismissalDate"
            )
        }
    }

    private static func saturating(_ value: Int, plus delay: Int) -> Int {
        value > Int.max - delay ? Int.max : value + delay
    }
}
