import ArgumentParser
import Crypto
import FoundationEssentials
import LivecastStore

/// `livecast identity-keys add|list|remove`: the public keys an app's backend signs identity assertions with.
struct IdentityKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identity-keys",
        abstract: "Add, list and remove the public keys whose signed assertions let a client key name a user.",
        discussion: """
            The app's backend signs a short-lived ES256 JWT for a signed-in user (header kid: the key's id; claims sub, aud, \
            exp); the app passes it on with its registration, and Livecast binds the user only when it verifies (docs/API.md).
            """,
        subcommands: [Add.self, List.self, Remove.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a P-256 public key (PEM), or replace the one of the same id.")

        @OptionGroup var app: AppSelection

        @Option(help: "The id assertions name in their header's kid: 1 to 64 letters, digits, '.', '_' or '-'.")
        var keyId: String

        @Option(help: "A PEM file of the P-256 public key (-----BEGIN PUBLIC KEY-----).")
        var publicKeyFile: String

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func validate() throws {
            guard IdentityKeys.isValid(keyID: self.keyId) else { throw ValidationError("--key-id must be 1 to 64 letters, digits, '.', '_' or '-'") }
        }

        func run() async throws {
            guard let text = try? String(contentsOfFile: self.publicKeyFile, encoding: .utf8) else {
                throw ValidationError("cannot read \(self.publicKeyFile)")
            }
            guard let key = try? P256.Signing.PublicKey(pemRepresentation: text) else {
                throw ValidationError("\(self.publicKeyFile) is not a P-256 (ES256) public key in PEM")
            }
            let (app, isNew) = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                let (_, isNew) = try await IdentityKeys(client: client, logger: .disabled).put(
                    appID: app.id,
                    keyID: self.keyId,
                    publicKey: key.pemRepresentation
                )
                return (app, isNew)
            }
            print("\(isNew ? "added" : "replaced") identity key \(self.keyId) of \(app.bundleID) (\(app.environment))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's identity keys: id and when added.")

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let keys = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await IdentityKeys(client: client, logger: .disabled).list(appID: app.id)
            }
            for key in keys { print("\(key.keyID)\t\(key.createdAt.formatted(.iso8601))") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an identity key: assertions it signed stop binding users at once.")

        @OptionGroup var app: AppSelection

        @Option(help: "The key's id.")
        var keyId: String

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let removed = try await self.database.withApp(self.app, try self.config.settings()) { client, app in
                try await IdentityKeys(client: client, logger: .disabled).delete(appID: app.id, keyID: self.keyId)
            }
            guard removed else { throw ValidationError("the app has no identity key \(self.keyId)") }
            print("removed identity key \(self.keyId)")
        }
    }
}
