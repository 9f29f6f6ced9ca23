public import Foundation

extension LivecastClient {
    /// Where a client sends its reports, as whom, and where it keeps what is not yet acknowledged.
    public struct Configuration: Sendable {
        /// Livecast's address, such as `https://livecast.example.com`.
        public var baseURL: URL
        /// The app's bundle id, as registered in Livecast.
        public var bundleID: String
        /// A `client` key of the app (`lc_…`): publishable, it may only report this device's tokens and activities.
        public var clientKey: String
        /// A directory of the app's container for the client's one small file (`livecast-kit.json`); created when
        /// missing. ``LivecastClient/defaultStoreDirectory`` is Application Support's `Livecast`.
        public var storeDirectory: URL
        /// The device's id in Livecast. `nil` (the default): a random UUID made once and kept in the store
        /// directory. A different id than the kept one starts afresh.
        public var deviceID: String?
        /// The OS version sent with registrations. Defaults to the running iOS version on iOS, else `nil`.
        public var osVersion: String?
        /// When a report is tried again.
        public var retryPolicy = RetryPolicy()
        /// How long one request may take. Defaults to 30 seconds.
        public var requestTimeout: Duration = .seconds(30)

        /// A configuration with the defaults.
        public init(baseURL: URL, bundleID: String, clientKey: String, storeDirectory: URL = LivecastClient.defaultStoreDirectory) {
            self.baseURL = baseURL
            self.bundleID = bundleID
            self.clientKey = clientKey
            self.storeDirectory = storeDirectory
            self.osVersion = Self.runningOSVersion
        }

        /// `major.minor` (and `.patch` when not 0) of the running iOS; `nil` elsewhere.
        static var runningOSVersion: String? {
            #if os(iOS)
            let version = ProcessInfo.processInfo.operatingSystemVersion
            let minor = "\(version.majorVersion).\(version.minorVersion)"
            return version.patchVersion == 0 ? minor : "\(minor).\(version.patchVersion)"
            #else
            return nil
            #endif
        }
    }

    /// `Livecast` in the app's Application Support directory (in the temporary directory where there is none).
    public static var defaultStoreDirectory: URL {
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        return (support ?? FileManager.default.temporaryDirectory).appendingPathComponent("Livecast", isDirectory: true)
    }
}
