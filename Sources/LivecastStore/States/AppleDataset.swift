import PostgresNIO

/// A dataset of Apple's APNs data export (`apple_metrics_exports.dataset`), spelled as Apple's request path names it.
package enum AppleDataset: String, Sendable, CaseIterable, Encodable, StoredState {
    /// Device pushes per day, push type and status.
    case deliveryMetrics = "deliverymetrics"
    /// One broadcast channel's figures per day.
    case channelMetrics = "broadcastchannelmetrics"
    /// The whole app's broadcast figures per day.
    case applicationMetrics = "broadcastapplicationmetric"
}
