import ArgumentParser
import LivecastCore
import LivecastStore

/// `livecast feeds list|show|history`.
struct FeedsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feeds",
        abstract: "List and show an app's feeds with their state, channel and followers.",
        subcommands: [List.self, Show.self, History.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the feeds: key, attributes type, state, channel, followers (token, channel).")

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let feeds = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await Feeds(client: client, logger: .disabled).list(appID: app.id)
            }
            for feed in feeds { print(Self.line(feed)) }
        }

        static func line(_ feed: Feeds.Feed) -> String {
            "\(feed.feedKey)\t\(feed.attributesType)\t\(feed.state)\t\(feed.channelID ?? "-")\t\(feed.tokenFollowers)\t\(feed.channelFollowers)"
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one feed, its attributes and its current content state.")

        @Option(help: "The feed's key.")
        var feed: String

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let feed = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await Feeds(client: client, logger: .disabled).get(appID: app.id, feedKey: self.feed)
            }
            guard let feed else { throw ValidationError("no feed \(self.feed)") }
            print(List.line(feed))
            print("attributes: \(feed.attributes.text)")
            print("content state: \(feed.contentState?.text ?? "-")")
            print("last timestamp: \(feed.lastTimestamp.map(String.init) ?? "-")")
            print("starts: \(feed.startsSent) sent, \(feed.startsUnregistered) with no activity registered after 5 minutes")
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a feed's updates, newest first: id, event, timestamp, status, and per-target counts."
        )

        @Option(help: "The feed's key.")
        var feed: String

        @OptionGroup var list: AppListOptions<UpdateRows>

        func run() async throws {
            let updates = try await self.list.withApp { client, app in
                try await UpdateStatus.history(
                    feedKey: self.feed,
                    appID: app.id,
                    before: nil,
                    limit: self.list.limit,
                    client: client,
                    logger: .disabled
                )
            }
            guard let updates else { throw ValidationError("no feed \(self.feed)") }
            for update in updates {
                let failures = update.failedByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print(
                    "\(update.updateID)\t\(update.event)\t\(update.timestamp)\t\(update.status)\tsent \(update.sent), pending \(update.pending), "
                        + "failed \(update.failed)\(failures.isEmpty ? "" : " (\(failures))")"
                )
            }
        }
    }
}
