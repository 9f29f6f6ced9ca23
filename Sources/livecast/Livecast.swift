import ArgumentParser

/// The `livecast` command: Live Activities orchestration for iOS apps.
@main
struct Livecast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast",
        abstract: "Orchestrates iOS Live Activities: tokens, broadcast channels and ordered APNs pushes.",
        subcommands: [
            DemoCommand.self, ServeCommand.self, MigrateCommand.self, ReapCommand.self, AppsCommand.self, KeysCommand.self,
            ChannelsCommand.self, FeedsCommand.self, TokensCommand.self, EmulatorCommand.self, SendCommand.self, PostgresCommand.self,
        ]
    )
}
