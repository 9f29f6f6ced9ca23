import ArgumentParser
import LivecastService
import LivecastStore

/// `livecast dead-letters list|replay`.
struct DeadLettersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letters",
        abstract: "List what the outbox gave up on, and replay it.",
        subcommands: [List.self, Replay.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List dead letters, oldest first: id, update, event, target, reason, tries, last try, replay."
        )

        @OptionGroup var list: AppListOptions<DeadLetterRows>

        func run() async throws {
            let entries = try await self.list.withApp { client, app in
                try await DeadLetterEntry.list(appID: app.id, after: nil, limit: self.list.limit, client: client, logger: .disabled)
            }
            for entry in entries {
                let replay = entry.replayOutcome.map { "replayed: \($0)" } ?? "not replayed"
                print(
                    "\(entry.id)\tupdate \(entry.updateID) (\(entry.event))\t\(entry.targetKind) \(entry.target ?? "-")\t\(entry.reason)\t"
                        + "\(entry.attempts) tries\t\(RecordText.time(entry.lastTryAt))\t\(replay)"
                )
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a dead letter again, unless its target is gone or a newer update has been accepted for it since.",
            discussion: "Prints requeued, superseded or targetGone. A running livecast serve sends what is requeued."
        )

        @Argument(help: "The dead letter's id.")
        var id: Int64

        @Option(help: "How long the push is tried again, in seconds, as serve's (default: $LIVECAST_RETRY_DEADLINE, else 3600).")
        var retryDeadline: Int?

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let settings = try self.config.settings()
            let retryDeadline = try settings.read(flags: ["retry-deadline": self.retryDeadline.map(String.init)]) {
                try Dispatcher.Settings(reader: $0).retryDeadline
            }
            let outcome = try await self.database.withApp(self.app, settings) { client, app in
                do {
                    return try await DeadLetterReplay(database: client, retryDeadline: retryDeadline, logger: .disabled)
                        .replay(id: self.id, appID: app.id)
                } catch DeadLetterReplay.Refusal.alreadyReplayed(let earlier) {
                    throw ValidationError("dead letter \(self.id) was replayed already (\(earlier.rawValue))")
                }
            }
            guard let outcome else { throw ValidationError("no dead letter \(self.id)") }
            print(outcome.rawValue)
        }
    }
}
