import ArgumentParser
import FoundationEssentials
import LivecastStore

/// `livecast keys create|list|revoke`.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke API keys (one app and one role each).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API key. The key is printed alone on the last line, once: it cannot be shown again.",
            discussion: """
                Roles are cumulative: client (one device's own tokens and activities: the key an app embeds), backend (tokens, \
                activities, updates), operator (feeds, channels), admin (the app, keys).
                """
        )

        @OptionGroup var app: AppSelection

        @Option(help: "client, backend, operator or admin.")
        var role: APIKeys.Role

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let role = self.role
            let (app, key, secret) = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                let (key, secret) = try await APIKeys(client: client, logger: .disabled).create(appID: app.id, role: role)
                return (app, key, secret)
            }
            print("created key \(key.id) (\(role.rawValue)) for \(app.bundleID) (\(app.environment)); keep it, it is shown once:")
            print(secret)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's keys: id, role, prefix, created, revoked.")

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let keys = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await APIKeys(client: client, logger: .disabled).list(appID: app.id)
            }
            for key in keys {
                let revoked = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print("\(key.id)\t\(key.role.rawValue)\tlc_\(key.prefix)_…\t\(key.createdAt.formatted(.iso8601))\t\(revoked)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke one of an app's keys; it stops working at once.",
            discussion: """
                Prints how many scheduled sends (sendAt) the key made that are still to go: they go out at their time \
                unless cancelled with --cancel-scheduled-sends (as for a key that leaked). Revoking a revoked key again \
                can still cancel them.
                """
        )

        @OptionGroup var app: AppSelection

        @Option(help: "The key's id (from keys list).")
        var keyId: Int64

        @Flag(help: "Also cancel the scheduled sends the key made that are still to go.")
        var cancelScheduledSends = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let cancel = self.cancelScheduledSends
            let revocation = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await APIKeys(client: client, logger: .disabled).revoke(appID: app.id, keyID: self.keyId, cancellingScheduledSends: cancel)
            }
            guard let revocation else { throw ValidationError("the app has no key \(self.keyId)") }
            print("revoked key \(self.keyId)")
            if revocation.cancelledScheduledSends > 0 {
                print("cancelled \(revocation.cancelledScheduledSends) scheduled send(s) it made")
            }
            if revocation.scheduledSends > 0 {
                print(
                    "\(revocation.scheduledSends) scheduled send(s) it made go out at their time; run this again with --cancel-scheduled-sends to cancel them"
                )
            }
        }
    }
}

extension APIKeys.Role: ExpressibleByArgument {}
