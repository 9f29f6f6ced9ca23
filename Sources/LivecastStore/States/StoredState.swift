package import PostgresNIO

/// A value of a state column (`activities.state`, `channels.state`, `feeds.state`, `updates.status`), stored as its
/// raw value, and decoded from and bound to a query as itself: a model holds the state, never its spelling.
package protocol StoredState: RawRepresentable<String>, PostgresCodable {}

extension StoredState {
    /// The value as an SQL literal, `'pending'`, for `\(unescaped:)` in a query: a literal, not a bound parameter, so
    /// PostgreSQL matches the partial indexes built on it.
    package var sql: String { "'\(self.rawValue)'" }
}
