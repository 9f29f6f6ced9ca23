import ArgumentParser
import LivecastServer
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `livecast demo`: the whole stack on this machine, and a game played through the HTTP API.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a throwaway stack (PostgreSQL, the APNs emulator, the server) and play a game through the HTTP API.",
        discussion: """
            Starts PostgreSQL in a temporary directory, the APNs emulator with simulated iPhones, and the server on a \
            free port pointed at the emulator; adds com.example.game with API keys; registers the iPhones' \
            push-to-start tokens; starts a Live Activity on all of them (iOS 18 on the feed's broadcast channel, iOS 17 \
            by token), sends goals, a late update (refused: 409 stale_timestamp) and the end. Prints what each iPhone \
            shows, and exits 1 unless every one shows the final score, ended, with the dismissal date. Needs \
            PostgreSQL's server programs (initdb, postgres). Everything it starts is stopped and removed on exit, \
            also on Ctrl-C.
            """
    )

    @Option(help: "Simulated iPhones: half on iOS 18 (rounded up; they follow the feed's channel), the rest on iOS 17 (update tokens).")
    var devices = 6

    @Flag(help: "Leave the stack running after the game, until Ctrl-C, and print curl examples with its API keys.")
    var keep = false

    @Flag(help: "Print only the final table, failures and --keep's examples.")
    var quiet = false

    @OptionGroup var migrations: MigrationsOption

    func validate() throws {
        guard (1...1000).contains(self.devices) else { throw ValidationError("--devices must be between 1 and 1000") }
    }

    func run() async throws {
        let migrations = try self.migrations.load(try LivecastConfig(configFile: nil))
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(LivecastMetrics.factory(registry: registry))
        let logger = Logger(label: "livecast.demo")
        let stack = DemoStack(
            migrations: migrations,
            metrics: registry,
            deviceCount: self.devices,
            keep: self.keep,
            progress: DemoProgress(quiet: self.quiet),
            logger: logger
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: stack, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
