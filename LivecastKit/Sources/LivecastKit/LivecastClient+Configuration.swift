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
        /// missing, and excluded from backups. ``LivecastClient/defaultStoreDirectory`` is Application Support's
        /// `Livecast`.
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
        /// How often each live registration (the push-to-start tokens, each running activity's token or channel) is
        /// reported again even when nothing changed, so that Livecast keeps it: Livecast expires a push-to-start token
        /// 30 days after its last registration (`--token-expiry-days`) and answers a re-registration
        /// `200 {"result":"unchanged"}`, refreshing it. Checked at launch, at ``LivecastClient/resume()`` and with
        /// every report. Defaults to 7 days; it must stay well inside the server's expiry, and
        /// ``LivecastClient/init(configuration:)`` refuses 30 days or more (and zero or less).
        public var reReportInterval: Duration = .seconds(7 * 24 * 3600)
        /// The wall clock: when reports are made and acknowledged, and so when they are due again or too old.
        /// Defaults to `Date.init`; tests give another.
        public var now: @Sendable () -> Date = Date.init
        /// How long after launch a push-to-start registration made for the user the store remembers waits for the app
        /// to call ``LivecastClient/identify(userID:assertion:)`` (it goes with that user's assertion) or
        /// ``LivecastClient/forgetUser()`` (without a user). Livecast replaces a push-to-start token's user with the
        /// registration's, so sent any earlier without the user it would unbind the user. Past it, the registration
        /// goes without the user rather than leave Livecast an old token (``LivecastEvent/Kind/identityBindingFailed``).
        /// Defaults to 60 seconds.
        public var identifyGracePeriod: Duration = .seconds(60)
        /// For the tests: `URLProtocol` classes that answer the client's requests instead of the network.
        var urlProtocols = URLProtocolClasses([])
        /// What keeps the app running while a report is sent (`UIApplication`'s background tasks on iOS); the tests
        /// put a recorder in its place.
        var backgroundTime = BackgroundTime.system

        /// A configuration with the defaults.
        public init(baseURL: URL, bundleID: String, clientKey: String, storeDirectory: URL = LivecastClient.defaultStoreDirectory) {
            self.baseURL = baseURL
            self.bundleID = bundleID
            self.clientKey = clientKey
            self.storeDirectory = storeDirectory
            self.osVersion = Self.runningOSVersion
        }

        /// The longest ``reReportInterval`` a client accepts: less than Livecast's default 30-day token expiry.
        public static let maximumReReportInterval: Duration = .seconds(30 * 24 * 3600)

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

    /// Why a configuration is refused.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        /// What is wrong with it.
        public let description: String
    }

    /// `Livecast` in the app's Application Support directory (in the temporary directory where there is none).
    public static var defaultStoreDirectory: URL {
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        return (support ?? FileManager.default.temporaryDirectory).appendingPathComponent("Livecast", isDirectory: true)
    }
}

/// `URLProtocol` classes for a session's configuration. Classes are immutable once registered, hence `Sendable`.
struct URLProtocolClasses: @unchecked Sendable {
    let classes: [AnyClass]

    init(_ classes: [AnyClass]) { self.classes = classes }
}
