/// When the reaper ends, dismisses, retires, expires and prunes. Every period is in seconds unless it says days.
public struct ReaperPolicy: Sendable, Hashable {
    /// How long rows are kept once finished; an app's own periods (columns on `apps`) replace these.
    public struct Retention: Sendable, Hashable {
        /// Finished updates (sent, superseded, failed), by their completion. Defaults to 7 days.
        public var updatesDays: Int
        /// Deliveries, by their attempt. Defaults to 7 days.
        public var deliveriesDays: Int
        /// Dismissed activities (with their tokens and updates), by their dismissal. Defaults to 30 days.
        public var dismissedActivitiesDays: Int

        public init(updatesDays: Int = 7, deliveriesDays: Int = 7, dismissedActivitiesDays: Int = 30) {
            self.updatesDays = updatesDays
            self.deliveriesDays = deliveriesDays
            self.dismissedActivitiesDays = dismissedActivitiesDays
        }
    }

    /// ActivityKit ends an activity 8 hours after its start.
    public static let activityLifetime = 8 * 3600
    /// An ended activity stays at most 4 hours on the Lock Screen.
    public static let maximumDismissalDelay = 4 * 3600

    /// How long after its `stale-date` an activity or feed without a newer update is ended; a feed's own
    /// `stale_grace_seconds` replaces it. Defaults to 15 minutes.
    public var staleGrace: Int
    /// How long after the reaper's end a stale activity leaves the Lock Screen (its `dismissal-date`). Defaults to
    /// 0: its content is out of date, so it goes at once.
    public var staleDismissalDelay: Int
    /// How long before ActivityKit's 8-hour limit the reaper ends an activity itself, so the backend's last state
    /// stays on the Lock Screen (for 4 hours, the most ActivityKit allows). Defaults to 15 minutes.
    public var lifetimeMargin: Int
    /// How long after a feed's end its channel is deleted at APNs and retired. Defaults to 1 hour.
    public var channelRetirementDelay: Int
    /// Days a push-to-start token may go without being registered again before it expires. Defaults to 30.
    public var tokenExpiryDays: Int
    /// The retention periods of apps that set none.
    public var retention: Retention
    /// Rows changed or deleted per statement, so no statement holds many locks for long. Defaults to 1,000.
    public var batchSize: Int

    public init(
        staleGrace: Int = 900,
        staleDismissalDelay: Int = 0,
        lifetimeMargin: Int = 900,
        channelRetirementDelay: Int = 3600,
        tokenExpiryDays: Int = 30,
        retention: Retention = Retention(),
        batchSize: Int = 1000
    ) {
        self.staleGrace = staleGrace
        self.staleDismissalDelay = staleDismissalDelay
        self.lifetimeMargin = lifetimeMargin
        self.channelRetirementDelay = channelRetirementDelay
        self.tokenExpiryDays = tokenExpiryDays
        self.retention = retention
        self.batchSize = max(batchSize, 1)
    }
}
