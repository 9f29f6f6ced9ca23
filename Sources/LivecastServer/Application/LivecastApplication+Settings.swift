import LivecastService
import LivecastStore
import PostgresNIO

extension LivecastApplication {
    /// What the running service is built from.
    public struct Settings: Sendable {
        /// The PostgreSQL server.
        public var database: PostgresClient.Configuration
        /// The host to listen on. Defaults to `127.0.0.1`.
        public var host: String
        /// The port to listen on; `0` picks a free one. Defaults to `8080`.
        public var port: Int
        /// Applied before the server accepts connections.
        public var migrations: [Migration]
        /// Opens the apps' sealed signing keys. Defaults to none.
        public var masterKey: MasterKey?
        /// The APNs hosts and trust instead of Apple's (the emulator, a proxy). Defaults to Apple's.
        public var apnsOverrides: AppClients.Overrides
        /// The API's rate limits and caps.
        public var api: LivecastAPI.Configuration
        /// Dispatcher workers; `0` runs none in this process. Defaults to `4`.
        public var dispatchWorkers: Int
        /// How the dispatcher claims, leases and retries.
        public var dispatch: Dispatcher.Settings
        /// Seconds between reaper passes (on the one instance that takes the lock); `0` runs none here. Defaults
        /// to `0`.
        public var reapInterval: Int
        /// What the reaper ends, retires, expires and prunes.
        public var reaperPolicy: ReaperPolicy

        /// - Parameters:
        ///   - database: The PostgreSQL server.
        ///   - migrations: The migrations to apply before serving.
        public init(
            database: PostgresClient.Configuration,
            host: String = "127.0.0.1",
            port: Int = 8080,
            migrations: [Migration],
            masterKey: MasterKey? = nil,
            apnsOverrides: AppClients.Overrides = .init(),
            api: LivecastAPI.Configuration = .init(),
            dispatchWorkers: Int = 4,
            dispatch: Dispatcher.Settings = .init(),
            reapInterval: Int = 0,
            reaperPolicy: ReaperPolicy = ReaperPolicy()
        ) {
            self.database = database
            self.host = host
            self.port = port
            self.migrations = migrations
            self.masterKey = masterKey
            self.apnsOverrides = apnsOverrides
            self.api = api
            self.dispatchWorkers = dispatchWorkers
            self.dispatch = dispatch
            self.reapInterval = reapInterval
            self.reaperPolicy = reaperPolicy
        }
    }
}
