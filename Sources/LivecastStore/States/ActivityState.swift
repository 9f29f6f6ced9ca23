import PostgresNIO

/// Where a Live Activity is in its life (`activities.state`): `starting → active → ended → dismissed`.
package enum ActivityState: String, Sendable, CaseIterable, StoredState {
    /// Started by a push-to-start, its device's app not yet heard from.
    case starting
    /// Running on its device.
    case active
    /// Ended: it may stay on the Lock Screen until its `dismissal-date`.
    case ended
    /// Gone from the device.
    case dismissed

    /// Whether updates and ends still reach it: `starting` or `active`.
    package var isRunning: Bool { self == .starting || self == .active }

    /// The running states (`starting`, `active`) as an SQL list: what updates and ends still reach.
    package static let runningSQL = "(\(Self.starting.sql), \(Self.active.sql))"
}
