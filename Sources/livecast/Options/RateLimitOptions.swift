import ArgumentParser

/// The API keys' request rates, and the failed authentications a client address or key prefix may make.
struct RateLimitOptions: ParsableArguments {
    @Option(help: "Requests a second one API key may make, sustained (default: $LIVECAST_RATE_LIMIT, else 50).")
    var rateLimit: Double?

    @Option(help: "Requests one API key may make at once after a quiet spell (default: $LIVECAST_RATE_BURST, else 100).")
    var rateBurst: Double?

    @Option(
        help: """
            Failed authentications (API and console sign-in) a second per client address and per key prefix, sustained, \
            before more are refused with 429 (default: $LIVECAST_FAILED_AUTH_RATE, else 1).
            """
    )
    var failedAuthRate: Double?

    @Option(help: "Failed authentications a client address or key prefix may make at once (default: $LIVECAST_FAILED_AUTH_BURST, else 20).")
    var failedAuthBurst: Double?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "rate-limit": self.rateLimit.map { "\($0)" },
            "rate-burst": self.rateBurst.map { "\($0)" },
            "failed-auth-rate": self.failedAuthRate.map { "\($0)" },
            "failed-auth-burst": self.failedAuthBurst.map { "\($0)" },
        ]
    }
}
