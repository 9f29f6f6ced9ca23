import ArgumentParser

/// `serve`'s job that fetches Apple's delivery figures: how often, from where, and the share of difference it flags.
struct AppleMetricsOptions: ParsableArguments {
    @Option(
        help: """
            Seconds between runs of the job that fetches Apple's delivery figures, on the one instance holding its \
            lock (default: $LIVECAST_APPLE_METRICS_INTERVAL, else 3600; 0 disables).
            """
    )
    var appleMetricsInterval: Int?

    @Option(help: "Apple's data-export host (default: $LIVECAST_APPLE_METRICS_URL, else https://api.icloud.apple.com).")
    var appleMetricsUrl: String?

    @Option(
        help:
            "Share by which Apple's figures and Livecast's may differ before a day is flagged (default: $LIVECAST_APPLE_METRICS_THRESHOLD, else 0.05)."
    )
    var appleMetricsThreshold: Double?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "apple-metrics-interval": self.appleMetricsInterval.map { "\($0)" },
            "apple-metrics-url": self.appleMetricsUrl,
            "apple-metrics-threshold": self.appleMetricsThreshold.map { "\($0)" },
        ]
    }
}
