import ArgumentParser

/// Load on Livecast's HTTP API, each mode against its own `livecast serve` and an APNs emulator in this process:
/// the API half of `scripts/bench.sh --api`, the game night of `scripts/bench.sh --gamenight`, and the fan-out across
/// instances of `scripts/bench.sh --scale`. Each mode prints one line, `MODE key=value … errors=N`, but `scale`, which
/// prints a table.
@main
struct APIBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast-api-benchmark",
        abstract: "Measure Livecast's HTTP API: registrations, updates, broadcasts and fan-outs to the wire, imports.",
        discussion: """
            Each mode starts the APNs emulator in this process (trusting --signing-key, accepting any device token) \
            and `livecast serve` pointed at it (with DATABASE_URL and LIVECAST_MASTER_KEY_FILE from the environment: \
            a migrated database holding the app), loads the API over keep-alive HTTP/1.1 connections, stops both, and \
            prints one summary line. Latencies are HdrHistogram percentiles in milliseconds; any non-2xx answer is an \
            error, and the first one's status and body go to standard error. `gamenight` and `scale` are the \
            exceptions: each makes its own database and runs several servers on it; `gamenight` judges what reached \
            the emulator rather than timing it, and `scale` times one fan-out per number of servers and judges it.
            """,
        subcommands: [
            RegisterCommand.self, ActivitiesCommand.self, UpdatesCommand.self, MaxUpdatesCommand.self, BroadcastLatencyCommand.self,
            FanOutLatencyCommand.self, ImportCommand.self, GameNightCommand.self, RenewalCommand.self, ScaleCommand.self,
        ]
    )
}
