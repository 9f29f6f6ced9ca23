import ArgumentParser
import NIOCore
import NIOPosix

/// The `livecast` command: Live Activities orchestration for iOS apps.
@main
struct Livecast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast",
        abstract: "Orchestrates iOS Live Activities: tokens, broadcast channels and ordered APNs pushes.",
        subcommands: [
            DemoCommand.self, ServeCommand.self, MigrateCommand.self, ReapCommand.self, AppsCommand.self, KeysCommand.self, IdentityKeysCommand.self,
            ChannelsCommand.self, FeedsCommand.self, TokensCommand.self, ActivitiesCommand.self, DeliveriesCommand.self, DeadLettersCommand.self,
            WebhooksCommand.self, AppleMetricsCommand.self,
            EmulatorCommand.self,
            SendCommand.self, PostgresCommand.self,
        ]
    )

    /// Runs the command with SwiftNIO's event loops as Swift concurrency's executor, so that a request's handler,
    /// its queries and its answer stay on the event loop that read it instead of hopping between NIO's threads and
    /// the concurrency pool's (a profile of the API showed its time in those thread switches).
    static func main() async {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        await self.main(nil)
    }
}
