/// Where a feed is in its life (`feeds.state`): `created → active → ended`.
package enum FeedState: String, Sendable, CaseIterable {
    /// Defined, not started.
    case created
    /// Started: its updates go out.
    case active
    /// Ended: it takes no more updates.
    case ended

    /// The state as an SQL literal.
    package var sql: String { "'\(self.rawValue)'" }
}
