import ArgumentParser

/// The `livecast` command: Live Activities orchestration for iOS apps.
@main
struct Livecast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast",
        abstract: "Orchestrates iOS Live Activities: tokens, broadcast channels and ordered APNs pushes.",
        subcommands: [EmulatorCommand.self, SendCommand.self, MigrateCommand.self]
    )
}
