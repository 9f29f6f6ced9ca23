import LivecastCore
import LivecastStore

/// When the reaper ends, dismisses, retires, expires and prunes.
package struct ReaperPolicy: Sendable, Hashable {
    /// How long rows are kept once finished; an app's own periods (columns on `apps`) replace these.
    package struct Retention: Sendable, Hashable {
        /// Finished updates (sent, superseded, failed), by their completion. Defaults to 7 days.
        package var updates: Duration
        /// Deliveries, by their attempt. Defaults to 7 days.
        package var deliveries: Duration
        /// Dismissed activities (with their tokens and updates), by their dismissal. Defaults to 30 days.
        package var dismissedActivities: Duration

        package init(updates: Duration = .days(7), deliveries: Duration = .days(7), dismissedActivities: Duration = .days(30)) {
            self.updates = updates
            self.deliveries = deliveries
            self.dismissedActivities = dismissedActivities
        }
    }

    /// An ended activity stays at most 4 hours on the Lock Screen.
    package static let maximumDismissalDelay = Duration.seconds(4 * 3600)

    /// How long an activity stays active before the system ends it (`activity-lifetime`): ActivityKit's 8 hours,
    /// lowered only to test. The aging rule and the renewals count from it.
    package var activityLifetime: Duration = .seconds(8 * 3600)
    /// How far ahead renewals are planned: more than the time between two passes, so none is planned late. Defaults
    /// to 10 minutes.
    package var renewalHorizon: Duration = .seconds(600)
    /// How long after its `stale-date` an activity or feed without a newer update is ended; a feed's own
    /// `stale_grace_seconds` replaces it. Defaults to 15 minutes.
    package var staleGrace: Duration
    /// How long after the reaper's end a stale activity leaves the Lock Screen (its `dismissal-date`). Defaults to
    /// 0: its content is out of date, so it goes at once.
    package var staleDismissalDelay: Duration
    /// How long before the activity lifetime ends the reaper ends an activity itself, so the backend's last state
    /// stays on the Lock Screen (for 4 hours, the most ActivityKit allows). Defaults to 15 minutes.
    package var lifetimeMargin: Duration
    /// How long after a feed's end its channel is deleted at APNs and retired. Defaults to 1 hour.
    package var channelRetirementDelay: Duration
    /// How long a push-to-start token may go without being registered again before it expires. Defaults to 30
    /// days.
    package var tokenExpiry: Duration
    /// How long after a feed's start the device's app should report the started activity; a start past it with none
    /// is marked unregistered (`start.unregistered`). Defaults to 5 minutes, as the API's `start-registration-timeout`.
    package var startRegistrationTimeout: Duration = Feeds.defaultRegistrationTimeout
    /// The retention periods of apps that set none.
    package var retention: Retention
    /// Rows changed or deleted per statement, so no statement holds many locks for long. Defaults to 1,000.
    package var batchSize: Int

    package init(
        staleGrace: Duration = .seconds(900),
        staleDismissalDelay: Duration = .zero,
        lifetimeMargin: Duration = .seconds(900),
        channelRetirementDelay: Duration = .seconds(3600),
        tokenExpiry: Duration = .days(30),
        retention: Retention = Retention(),
        batchSize: Int = 1000
    ) {
        self.staleGrace = staleGrace
        self.staleDismissalDelay = staleDismissalDelay
        self.lifetimeMargin = lifetimeMargin
        self.channelRetirementDelay = channelRetirementDelay
        self.tokenExpiry = tokenExpiry
        self.retention = retention
        self.batchSize = max(batchSize, 1)
    }
}
