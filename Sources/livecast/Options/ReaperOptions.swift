import ArgumentParser
import LivecastService

/// The reaper's periods, shared by `reap` and `serve`, as ``LivecastConfig`` reads them.
struct ReaperOptions: ParsableArguments {
    @Option(
        help:
            "Seconds after an activity's or feed's stale-date before it is ended; a feed's own grace wins (default: $LIVECAST_STALE_GRACE, else 900)."
    )
    var staleGrace: Int?

    @Option(
        help: """
            Seconds an activity stays active before the system ends it: ActivityKit's 8 hours; lower it only to test \
            (default: $LIVECAST_ACTIVITY_LIFETIME, else 28800).
            """
    )
    var activityLifetime: Int?

    @Option(help: "Seconds before the activity lifetime that activities are ended (default: $LIVECAST_LIFETIME_MARGIN, else 900).")
    var lifetimeMargin: Int?

    @Option(help: "Seconds after a feed's end that its channel is retired (default: $LIVECAST_CHANNEL_RETIREMENT_DELAY, else 3600).")
    var channelRetirementDelay: Int?

    @Option(help: "Days without a new registration before a push-to-start token expires (default: $LIVECAST_TOKEN_EXPIRY_DAYS, else 30).")
    var tokenExpiryDays: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "stale-grace": self.staleGrace.map(String.init), "lifetime-margin": self.lifetimeMargin.map(String.init),
            "activity-lifetime": self.activityLifetime.map(String.init),
            "channel-retirement-delay": self.channelRetirementDelay.map(String.init), "token-expiry-days": self.tokenExpiryDays.map(String.init),
        ]
    }

    /// The policy (`ReaperPolicy(reader:)`). - Throws: `ValidationError` for a value that is not a whole number in
    /// range.
    func policy(_ settings: LivecastConfig) throws -> ReaperPolicy {
        try settings.read(flags: self.flags) { try ReaperPolicy(reader: $0) }
    }
}
