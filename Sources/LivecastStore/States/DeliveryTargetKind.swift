import PostgresNIO

/// What a failed push in `deliveries` went to (`deliveries.target_kind`): a device token, or a channel.
package enum DeliveryTargetKind: String, Sendable, CaseIterable, StoredState {
    /// A device push, to a token.
    case device
    /// A broadcast, to a channel.
    case channel
}
