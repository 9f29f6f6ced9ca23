import ArgumentParser
import LivecastStore

/// `livecast feeds list|show`.
struct FeedsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feeds",
        abstract: "List and show an app's feeds with their state, channel and followers.",
        subcommands: [List.self, Show.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the feeds: key, attributes type, state, channel, followers (token, channel).")

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let feeds = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let app = try await self.app.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
                return try await Feeds(client: client, logger: .disabled).list(appID: app.id)
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
            let feed = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let app = try await self.app.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
                return try await Feeds(client: client, logger: .disabled).get(appID: app.id, feedKey: self.feed)
            }
            guard let feed else { throw ValidationError("no feed \(self.feed)") }
            print(List.line(feed))
            print("attributes: \(feed.attributes.text)")
            print("content state: \(feed.contentState?.text ?? "-")")
            print("last timestamp: \(feed.lastTimestamp.map(String.init) ?? "-")")
        }
    }
}
