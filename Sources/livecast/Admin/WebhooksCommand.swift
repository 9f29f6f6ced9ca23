import ArgumentParser
import FoundationEssentials
import LivecastCore
import LivecastService
import LivecastStore

/// `livecast webhooks add|list|enable|disable|remove|rotate-secret|failed|replay`.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Manage where an app's events are POSTed: add, list, enable, disable and remove endpoints, rotate secrets, replay.",
        subcommands: [Add.self, List.self, Enable.self, Disable.self, Remove.self, RotateSecret.self, Failed.self, Replay.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a webhook endpoint. Its id, then its signing secret alone on the last line, once: it cannot be shown again.",
            discussion: """
                The URL is https (http only to this host), with no user name or password, and not an address of this host, the \
                private network or the link-local range unless --webhook-allow-private. An app has at most 16 endpoints. The \
                secret is sealed with the master key.
                """
        )

        @OptionGroup var app: AppSelection

        @Option(help: "Where the events are POSTed.")
        var url: String

        @Option(name: .customLong("event"), help: "An event type it wants (repeat for more; default: every type).")
        var events: [String] = []

        @Flag(help: "Accept a private, loopback or link-local address (default: $LIVECAST_WEBHOOK_ALLOW_PRIVATE, else false).")
        var webhookAllowPrivate = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let settings = try self.config.settings()
            let allowPrivate = try settings.read(flags: ["webhook-allow-private": self.webhookAllowPrivate ? "true" : nil]) {
                try WebhookDeliverer.Settings(reader: $0).allowPrivate
            }
            guard let masterKey = try self.masterKey.masterKey(settings) else {
                throw ValidationError("the secret is sealed with the master key: give --master-key-file (or LIVECAST_MASTER_KEY_FILE)")
            }
            let url = try WebhooksCommand.checked { try WebhookURL(self.url, allowPrivate: allowPrivate) }
            let events = try WebhooksCommand.checked { try EventType.parse(self.events, field: "event") }
            let (endpoint, secret) = try await WebhooksCommand.withEndpoints(self.app, self.database, settings) { endpoints, app in
                try await WebhooksCommand.checkedAsync { try await endpoints.create(appID: app.id, url: url, events: events, masterKey: masterKey) }
            }
            print("added webhook \(WebhooksCommand.text(endpoint.id)) → \(endpoint.url); keep its signing secret, it is shown once:")
            print(secret.text)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List an app's webhook endpoints: id, state, url, events, pending (oldest), failed, failures, last success, last failure."
        )

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let endpoints = try await WebhooksCommand.withEndpoints(self.app, self.database, try self.config.settings()) { endpoints, app in
                try await endpoints.list(appID: app.id)
            }
            for endpoint in endpoints {
                let delivery = endpoint.delivery
                let events = endpoint.events.isEmpty ? "all events" : endpoint.events.joined(separator: ",")
                let oldest = delivery.oldestPendingAgeSeconds.map { " (oldest \($0) s)" } ?? ""
                let success = delivery.lastSuccessAt.map { "last success \($0.formatted(.iso8601))" } ?? "no success yet"
                let failure = delivery.lastFailureAt.map { "last failure \($0.formatted(.iso8601)): \(delivery.lastFailure ?? "-")" } ?? "no failure"
                print(
                    "\(WebhooksCommand.text(endpoint.id))\t\(endpoint.enabled ? "enabled" : "disabled")\t\(endpoint.url)\t\(events)\t"
                        + "\(delivery.pending) pending\(oldest)\t\(delivery.failed) failed\t\(delivery.consecutiveFailures) failures in a row\t"
                        + "\(success)\t\(failure)"
                )
            }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a webhook endpoint: events from now on are delivered to it.")

        @OptionGroup var endpoint: EndpointSelection

        func run() async throws {
            try await self.endpoint.update(WebhookEndpoints.Changes(enabled: true))
            print("enabled webhook \(self.endpoint.id)")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable a webhook endpoint: events written while it is disabled are never delivered to it."
        )

        @OptionGroup var endpoint: EndpointSelection

        func run() async throws {
            try await self.endpoint.update(WebhookEndpoints.Changes(enabled: false))
            print("disabled webhook \(self.endpoint.id)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a webhook endpoint, with what it is still owed.")

        @OptionGroup var endpoint: EndpointSelection

        func run() async throws {
            let id = try self.endpoint.uuid()
            let removed = try await self.endpoint.withEndpoints { endpoints, app in try await endpoints.delete(appID: app.id, id: id) }
            guard removed else { throw ValidationError("the app has no webhook \(self.endpoint.id)") }
            print("removed webhook \(self.endpoint.id)")
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a webhook endpoint a new signing secret, printed alone on the last line, once.",
            discussion: "The old secret keeps signing deliveries beside the new one for 24 hours, so the receiver can move to the new one."
        )

        @OptionGroup var endpoint: EndpointSelection
        @OptionGroup var masterKey: MasterKeyOption

        func run() async throws {
            let id = try self.endpoint.uuid()
            guard let masterKey = try self.masterKey.masterKey(try self.endpoint.config.settings()) else {
                throw ValidationError("the secret is sealed with the master key: give --master-key-file (or LIVECAST_MASTER_KEY_FILE)")
            }
            let rotated = try await self.endpoint.withEndpoints { endpoints, app in
                try await endpoints.rotateSecret(appID: app.id, id: id, masterKey: masterKey)
            }
            guard let rotated else { throw ValidationError("the app has no webhook \(self.endpoint.id)") }
            let until = rotated.endpoint.previousSecretExpiresAt.map { " until \($0.formatted(.iso8601))" } ?? ""
            print("rotated the secret of webhook \(self.endpoint.id); the old one still signs\(until); keep the new one, it is shown once:")
            print(rotated.secret.text)
        }
    }

    struct Failed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the events a webhook endpoint gave up on after 24 hours, oldest first: id, event, type, attempts, failed, last error."
        )

        @Option(help: "At most this many (1 to 1000).")
        var limit: Int = 100

        @OptionGroup var endpoint: EndpointSelection

        func validate() throws {
            guard (1...1000).contains(self.limit) else { throw ValidationError("--limit must be from 1 to 1000") }
        }

        func run() async throws {
            let id = try self.endpoint.uuid()
            let deliveries = try await self.endpoint.withEndpoints { endpoints, app in
                try await endpoints.failedDeliveries(appID: app.id, id: id, after: nil, limit: self.limit)
            }
            guard let deliveries else { throw ValidationError("the app has no webhook \(self.endpoint.id)") }
            for delivery in deliveries {
                let event = delivery.event
                print(
                    "\(delivery.id)\tevent \(event["id"]?.stringValue ?? "-")\t\(event["type"]?.stringValue ?? "-")\t\(delivery.attempts) attempts\t"
                        + "\(delivery.failedAt.formatted(.iso8601))\t\(delivery.lastError ?? "-")"
                )
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deliver again every event a webhook endpoint gave up on; prints how many.",
            discussion: "They are owed again from their first try, and the endpoint is due at once. A running livecast serve delivers them."
        )

        @OptionGroup var endpoint: EndpointSelection

        func run() async throws {
            let id = try self.endpoint.uuid()
            let count = try await self.endpoint.withEndpoints { endpoints, app in try await endpoints.replayFailed(appID: app.id, id: id) }
            guard let count else { throw ValidationError("the app has no webhook \(self.endpoint.id)") }
            print("replayed \(count) deliveries")
        }
    }

    /// `<id> --bundle-id B [--environment E]`, the database's options and `--config`: one endpoint of an app.
    struct EndpointSelection: ParsableArguments {
        @Argument(help: "The endpoint's id (from webhooks list).")
        var id: String

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        /// The id. - Throws: `ValidationError` unless it is a UUID.
        func uuid() throws -> UUID {
            guard let id = UUID(uuidString: self.id) else { throw ValidationError("the app has no webhook \(self.id)") }
            return id
        }

        /// Runs `body` with the app's endpoints and the app.
        func withEndpoints<Result: Sendable>(_ body: (WebhookEndpoints, Apps.App) async throws -> Result) async throws -> Result {
            try await WebhooksCommand.withEndpoints(self.app, self.database, try self.config.settings(), body)
        }

        /// Changes the endpoint. - Throws: `ValidationError` when the app has none of that id.
        func update(_ changes: WebhookEndpoints.Changes) async throws {
            let id = try self.uuid()
            let updated = try await self.withEndpoints { endpoints, app in try await endpoints.update(appID: app.id, id: id, changes: changes) }
            guard updated != nil else { throw ValidationError("the app has no webhook \(self.id)") }
        }
    }

    /// Runs `body` with a client of the database, the app's endpoints and the app.
    static func withEndpoints<Result: Sendable>(
        _ selection: AppSelection,
        _ database: DatabaseOptions,
        _ settings: LivecastConfig,
        _ body: (WebhookEndpoints, Apps.App) async throws -> Result
    ) async throws -> Result {
        try await database.withApp(selection, settings) { client, app in
            try await body(WebhookEndpoints(client: client, logger: .disabled), app)
        }
    }

    /// What `body` returns, a ``StoreError`` it throws as a `ValidationError` with its message.
    static func checkedAsync<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
    }

    /// What `body` returns, a ``StoreError`` it throws as a `ValidationError` with its message.
    static func checked<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
    }

    /// An endpoint's id as the CLI prints it.
    static func text(_ id: UUID) -> String { id.uuidString.lowercased() }
}
