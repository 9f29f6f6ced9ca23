import ArgumentParser

/// The API's rules in time: a client's clock skew, a started activity's registration, a console session's idle time.
struct APIRuleOptions: ParsableArguments {
    @Option(help: "Seconds a client's timestamp may be ahead of the server's clock (default: $LIVECAST_MAX_CLOCK_SKEW, else 60).")
    var maxClockSkew: Int?

    @Option(
        help:
            "Seconds after a feed's start within which the device's app should register the activity; a feed counts the starts past it with none (default: $LIVECAST_START_REGISTRATION_TIMEOUT, else 300)."
    )
    var startRegistrationTimeout: Int?

    @Option(help: "Seconds a console session may go unused before it ends (default: $LIVECAST_CONSOLE_IDLE_TIMEOUT, else 1800).")
    var consoleIdleTimeout: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "max-clock-skew": self.maxClockSkew.map { "\($0)" },
            "start-registration-timeout": self.startRegistrationTimeout.map { "\($0)" },
            "console-idle-timeout": self.consoleIdleTimeout.map { "\($0)" },
        ]
    }
}
