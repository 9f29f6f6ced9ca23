extension Duration {
    /// The duration in seconds, with its fraction: for SQL intervals (`make_interval(secs => …)`) and arithmetic on
    /// UNIX times, the only places where times are numbers.
    package var inSeconds: Double {
        let (seconds, attoseconds) = self.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole seconds, rounded down.
    package var wholeSeconds: Int64 { self.components.seconds }

    /// `count` days.
    package static func days(_ count: Int) -> Duration { .seconds(count * 86_400) }
}
