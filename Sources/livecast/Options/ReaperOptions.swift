import ArgumentParser
import LivecastService

/// The reaper's periods, shared by `reap` and `serve`. Each comes from its flag, else its environment variable, else
/// the config file.
struct ReaperOptions: ParsableArguments {
    @Option(
        help:
            "Seconds after an activity's or feed's stale-date before it is ended; a feed's own grace wins (default: $LIVECAST_STALE_GRACE, else 900)."
    )
    var staleGrace: Int?

    @Option(help: "Seconds before the 8-hour limit that activities are ended (default: $LIVECAST_LIFETIME_MARGIN, else 900).")
    var lifetimeMargin: Int?

    @Option(help: "Seconds after a feed's end that its channel is retired (default: $LIVECAST_CHANNEL_RETIREMENT_DELAY, else 3600).")
    var channelRetirementDelay: Int?

    @Option(help: "Days without a new registration before a push-to-start token expires (default: $LIVECAST_TOKEN_EXPIRY_DAYS, else 30).")
    var tokenExpiryDays: Int?

    /// The policy. - Throws: `ValidationError` for a value that is not a whole number in range.
    func policy(_ settings: Settings) throws -> ReaperPolicy {
        let defaults = ReaperPolicy()
        return ReaperPolicy(
            staleGrace: try settings.integer(
                self.staleGrace,
                env: "LIVECAST_STALE_GRACE",
                key: "stale-grace",
                minimum: 0,
                default: defaults.staleGrace
            ),
            lifetimeMargin: try settings.integer(
                self.lifetimeMargin,
                env: "LIVECAST_LIFETIME_MARGIN",
                key: "lifetime-margin",
                minimum: 0,
                default: defaults.lifetimeMargin
            ),
            channelRetirementDelay: try settings.integer(
                self.channelRetirementDelay,
                env: "LIVECAST_CHANNEL_RETIREMENT_DELAY",
                key: "channel-retirement-delay",
                minimum: 0,
                default: defaults.channelRetirementDelay
            ),
            tokenExpiryDays: try settings.integer(
                self.tokenExpiryDays,
                env: "LIVECAST_TOKEN_EXPIRY_DAYS",
                key: "token-expiry-days",
                minimum: 1,
                default: defaults.tokenExpiryDays
            )
        )
    }
}
