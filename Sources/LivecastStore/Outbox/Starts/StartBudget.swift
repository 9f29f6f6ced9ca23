/// The push-to-start notifications Livecast sends one device in a rolling window (`start-budget`,
/// `start-budget-window`): a device drops starts over its own budget while APNs answers `200`, so the server must
/// never send one past it. Starts and renewals alike spend it; a start without room waits in `queued_starts`.
package struct StartBudget: Sendable, Hashable {
    /// Starts one device receives in a window.
    package var starts: Int
    /// The rolling window.
    package var window: Duration

    package init(starts: Int, window: Duration) {
        self.starts = max(starts, 1)
        self.window = window
    }

    /// Eight starts an hour. Apple's engineers speak of about ten "in a short time frame" that cannot be raised, and
    /// say it could change: eight leaves room for a start the app made itself, and an hour covers any short frame.
    package static let `default` = StartBudget(starts: 8, window: .seconds(3600))
}
