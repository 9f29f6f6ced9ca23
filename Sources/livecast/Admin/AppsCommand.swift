import APNs
import ArgumentParser
import Foundation
import LivecastCore
import LivecastStore
import Logging

/// `livecast apps add|list|remove`.
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "Add, list and remove apps (a bundle id in one APNs environment, with its signing key).",
        subcommands: [Add.self, List.self, Remove.self, Resume.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an app. Its .p8 key is sealed into the database with the master key, or stored by path with --key-by-path."
        )

        @Option(help: "The app's bundle id.")
        var bundleId: String

        @Option(help: "sandbox or production.")
        var environment: String

        @OptionGroup var signingKey: SigningKeyOptions

        @Option(help: "The .p8 signing key file.")
        var keyFile: String

        @Flag(help: "Store the key file's path (a mounted secret) instead of sealing the key into the database.")
        var keyByPath = false

        @Option(help: "Priority-10 pushes per hour before the excess goes at priority 5 (default: no cap).")
        var priority10HourlyCap: Int?

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            guard let environment = APNsEnvironment(rawValue: self.environment) else {
                throw ValidationError("--environment must be sandbox or production")
            }
            let settings = try self.config.settings()
            let masterKey = try self.masterKey.masterKey(settings)
            let storedKey: Apps.SigningKey
            if self.keyByPath {
                storedKey = .path(URL(fileURLWithPath: self.keyFile).standardizedFileURL.path)
            } else {
                guard masterKey != nil else {
                    throw ValidationError("sealing the key needs --master-key-file (or LIVECAST_MASTER_KEY_FILE); or give --key-by-path")
                }
                guard let pem = try? String(contentsOfFile: self.keyFile, encoding: .utf8) else {
                    throw ValidationError("--key-file: cannot read \(self.keyFile)")
                }
                storedKey = .sealed(p8: pem)
            }
            let app = try await self.database.withClient(settings, logger: .disabled) { client in
                try await Apps(client: client, masterKey: masterKey, logger: .disabled).add(
                    bundleID: self.bundleId,
                    environment: environment,
                    teamID: self.signingKey.teamId,
                    keyID: self.signingKey.keyId,
                    signingKey: storedKey,
                    priority10HourlyCap: self.priority10HourlyCap
                )
            }
            print("added \(app.bundleID) (\(app.environment))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps: bundle id, environment, team id, key id.")

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let apps = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                try await Apps(client: client, masterKey: nil, logger: .disabled).list()
            }
            for app in apps {
                let held = app.sendingHeld.map { "\tsending held: \($0.reason)" } ?? ""
                print("\(app.bundleID)\t\(app.environment)\t\(app.teamID)\t\(app.keyID)\(held)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove an app with all it holds: tokens, activities, feeds, updates, keys. Its channels stay at APNs."
        )

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let app = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let apps = Apps(client: client, masterKey: nil, logger: .disabled)
                let app = try await self.app.app(in: apps)
                _ = try await apps.remove(id: app.id)
                return app
            }
            print("removed \(app.bundleID) (\(app.environment))")
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let an app send again after the invalidation guard held it (apps list shows why it was held).",
            discussion: """
                The guard holds an app when one batch of its pushes comes back mostly Unregistered or BadDeviceToken: a \
                wrong environment or signing key, not users uninstalling. No token was invalidated and the pushes stay \
                owed: fix the cause, then resume, and they go out.
                """
        )

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let (app, wasHeld) = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let apps = Apps(client: client, masterKey: nil, logger: .disabled)
                let app = try await self.app.app(in: apps)
                return (app, try await apps.resumeSending(id: app.id))
            }
            print(wasHeld ? "resumed \(app.bundleID) (\(app.environment))" : "\(app.bundleID) (\(app.environment)) was not held")
        }
    }
}

extension Logger {
    /// A logger that drops everything: the CLI reports through its output and exit status.
    static let disabled = Logger(label: "livecast.cli", factory: { _ in SwiftLogNoOpLogHandler() })
}
