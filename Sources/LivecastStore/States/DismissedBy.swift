import PostgresNIO

/// Who dismissed an activity (`activities.dismissed_by`), as `activity.dismissed` events report it (`dismissedBy`).
package enum DismissedBy: String, Sendable, Hashable, CaseIterable, StoredState {
    /// The app reported it gone after it ended: the system removed it, or the user did after the end.
    case device
    /// The app reported it gone while it still ran: the user swiped it away. Its device is left out of the feed's
    /// renewals and later starts, unless a start asks otherwise (`includeDismissed`).
    case user
    /// The reaper, once its dismissal date passed.
    case reaper
}
