import PostgresNIO

/// Where a feed is in its life (`feeds.state`): `created → active → ended`.
package enum FeedState: String, Sendable, CaseIterable, StoredState {
    /// Defined, not started.
    case created
    /// Started: its updates go out.
    case active
    /// Ended: it takes no more updates.
    case ended
}
