import PostgresNIO

/// Where a broadcast channel of the registry is (`channels.state`).
package enum ChannelState: String, Sendable, CaseIterable, StoredState {
    /// Live at APNs and in use: broadcasts go to it.
    case active
    /// Created at APNs, but the registry's write failed: the reconciler deletes it.
    case orphan
    /// Deleted at APNs once its feed ended; never sent to again.
    case retired
    /// APNs no longer has it (`ChannelNotRegistered`, `BadChannelId`, or the reconciler found it gone).
    case missing
}
