import ArgumentParser
import LivecastService
import LivecastStore
import PostgresNIO

/// `livecast channels create|list|show|retire|reconcile`.
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "Create, list, show, retire and reconcile an app's broadcast channels (kept in step with APNs).",
        subcommands: [Create.self, List.self, Show.self, Retire.self, Reconcile.self]
    )

    /// What every channel command needs: the app, the database, and APNs.
    struct Common: ParsableArguments {
        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var apns: APNsOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        /// Runs `body` with the app and its channel registry.
        func withRegistry<Result: Sendable>(_ body: (Apps.App, ChannelRegistry) async throws -> Result) async throws -> Result {
            let settings = try self.config.settings()
            let masterKey = try self.masterKey.masterKey(settings)
            let overrides = try self.apns.overrides(settings)
            return try await self.database.withClient(settings, logger: .disabled) { client in
                let apps = Apps(client: client, masterKey: masterKey, logger: .disabled)
                let app = try await self.app.app(in: apps)
                let clients = AppClients(apps: apps, overrides: overrides, logger: .disabled)
                do {
                    let apns = try await clients.client(forApp: app.id)
                    let result = try await body(
                        app,
                        ChannelRegistry(channels: Channels(client: client, logger: .disabled), apns: apns.client, logger: .disabled)
                    )
                    await clients.shutdown()
                    return result
                } catch {
                    await clients.shutdown()
                    throw error
                }
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a channel at APNs and record it; prints its id.")

        @Option(help: "noStorage or mostRecentMessage.")
        var storagePolicy: String

        @Option(help: "The feed the channel belongs to.")
        var feed: String?

        @OptionGroup var common: Common

        func run() async throws {
            let policy: Int
            switch self.storagePolicy {
            case "noStorage": policy = 0
            case "mostRecentMessage": policy = 1
            default: throw ValidationError("--storage-policy must be noStorage or mostRecentMessage")
            }
            let channel = try await self.common.withRegistry { app, registry in
                try await registry.create(appID: app.id, bundleID: app.bundleID, storagePolicy: policy, feedKey: self.feed)
            }
            print(channel.channelID)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the channels as Livecast records them (id, policy, state, followers, feed), or as APNs lists them."
        )

        @Flag(help: "List APNs' own view: the ids it holds for the app.")
        var apns = false

        @OptionGroup var common: Common

        func run() async throws {
            let lines = try await self.common.withRegistry { app, registry in
                if self.apns { return try await registry.listAtAPNs(bundleID: app.bundleID) }
                return try await registry.list(appID: app.id).map(Self.line)
            }
            for line in lines { print(line) }
        }

        static func line(_ channel: Channels.Channel) -> String {
            "\(channel.channelID)\t\(channel.storagePolicy == 1 ? "mostRecentMessage" : "noStorage")\t\(channel.state)\t\(channel.followers)\t\(channel.feedKey ?? "-")"
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one channel: id, policy, state, followers, feed.")

        @Option(help: "The channel id (base64).")
        var channelId: String

        @OptionGroup var common: Common

        func run() async throws {
            let channel = try await self.common.withRegistry { app, registry in
                try await registry.get(appID: app.id, channelID: self.channelId)
            }
            guard let channel else { throw ValidationError("no channel \(self.channelId)") }
            print(List.line(channel))
        }
    }

    struct Retire: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a channel at APNs and mark it retired; it is never sent to again.")

        @Option(help: "The channel id (base64).")
        var channelId: String

        @Flag(help: "Retire it even while activities follow it.")
        var force = false

        @OptionGroup var common: Common

        func run() async throws {
            let channel = try await self.common.withRegistry { app, registry in
                try await registry.retire(appID: app.id, bundleID: app.bundleID, channelID: self.channelId, force: self.force)
            }
            print("retired \(channel.channelID)")
        }
    }
}
