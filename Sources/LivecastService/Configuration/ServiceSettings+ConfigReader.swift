import APNs
package import Configuration
import LivecastCore
import LivecastSettings
import LivecastStore

extension Dispatcher.Settings {
    /// How a dispatcher works, as settings give it; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `retry-deadline` (whole seconds, 1 or more, default 3600): how long a push APNs keeps asking to retry
    ///     stays owed before it is a dead letter; an end is kept while its activity can show.
    ///   - `fan-out-slice` (whole number, 100 or more, default 50000): a feed's token-based followers per slice; a
    ///     fan-out to more is split into slices that the workers of every instance walk side by side.
    ///   - `start-budget` (whole number, 1 or more, default 8) and `start-budget-window` (whole seconds, 1 or more,
    ///     default 3600): the push-to-start notifications (starts and renewals) one device is sent in a rolling
    ///     window; a start without room waits until there is.
    ///   - `activity-lifetime`: as ``ReaperPolicy/init(reader:)`` reads it.
    /// - Throws: ``InvalidSetting`` for a value out of range.
    package init(reader: ConfigReader) throws {
        self.init()
        self.retryDeadline = try reader.seconds("retry-deadline", atLeast: 1, default: self.retryDeadline)
        self.sliceSize = try reader.wholeNumber("fan-out-slice", atLeast: 100, default: self.sliceSize)
        self.startBudget = StartBudget(
            starts: try reader.wholeNumber("start-budget", atLeast: 1, default: self.startBudget.starts),
            window: try reader.seconds("start-budget-window", atLeast: 1, default: self.startBudget.window)
        )
        self.activityLifetime = try ReaperPolicy.activityLifetime(reader: reader)
    }
}

extension ReaperPolicy {
    /// When the reaper ends, retires and expires, as settings give it; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `stale-grace` (whole seconds, 0 or more, default 900): after an activity's or feed's stale-date before
    ///     it is ended; a feed's own grace wins.
    ///   - `activity-lifetime` (whole seconds, 10 or more, default 28800, ActivityKit's 8 hours; lowered only to
    ///     test): how long an activity stays active before the system ends it. The aging rule, renewals and retries
    ///     count from it.
    ///   - `lifetime-margin` (whole seconds, 0 or more, less than `activity-lifetime`, default 900): before the
    ///     activity lifetime that activities are ended.
    ///   - `channel-retirement-delay` (whole seconds, 0 or more, default 3600): after a feed's end that its channel
    ///     is retired.
    ///   - `token-expiry-days` (whole days, 1 or more, default 30): without a new registration before a
    ///     push-to-start token expires.
    ///   - `start-registration-timeout` (whole seconds, 1 or more, default 300): after a feed's start before a start
    ///     no activity was reported for is marked unregistered (the API reads the same key).
    /// - Throws: ``InvalidSetting`` for a value out of range.
    package init(reader: ConfigReader) throws {
        self.init()
        self.staleGrace = try reader.seconds("stale-grace", atLeast: 0, default: self.staleGrace)
        self.activityLifetime = try Self.activityLifetime(reader: reader)
        self.lifetimeMargin = try reader.seconds("lifetime-margin", atLeast: 0, default: self.lifetimeMargin)
        guard self.lifetimeMargin < self.activityLifetime else {
            throw InvalidSetting(
                key: "lifetime-margin",
                value: "\(self.lifetimeMargin.wholeSeconds)",
                allowed: "must be less than activity-lifetime (\(self.activityLifetime.wholeSeconds))"
            )
        }
        self.channelRetirementDelay = try reader.seconds("channel-retirement-delay", atLeast: 0, default: self.channelRetirementDelay)
        self.tokenExpiry = try reader.days("token-expiry-days", atLeast: 1, default: self.tokenExpiry)
        self.startRegistrationTimeout = try reader.seconds("start-registration-timeout", atLeast: 1, default: self.startRegistrationTimeout)
    }
}

extension ReaperPolicy {
    /// `activity-lifetime`: how long an activity stays active, which the dispatcher, the reaper and the API share.
    static func activityLifetime(reader: ConfigReader) throws -> Duration {
        try reader.seconds("activity-lifetime", atLeast: 10, default: .seconds(8 * 3600))
    }
}

extension AppClients.Overrides {
    /// The APNs hosts and trust that settings give instead of Apple's (the emulator, a proxy).
    ///
    /// - Configuration keys:
    ///   - `apns-push-url` (`https://HOST:PORT`, optional): pushes and broadcasts go there instead of Apple's host.
    ///   - `apns-management-url` (`https://HOST:PORT`, optional): channels are managed there.
    ///   - `apns-ca-file` (path, optional): also trust the certificates in this PEM file. A certificate in it that
    ///     names Apple's APNs hosts (the emulator's) is refused unless both URLs above are on loopback: trusted for
    ///     Apple's hosts, it would let whoever holds its key answer as APNs.
    ///   - `apns-connections` (whole number, 1 to 64, default 2): the most HTTP/2 connections per app and APNs host
    ///     on this instance; one opens at first use, all of them at the first batch of a hundred pushes or more (a
    ///     fan-out page), and another while every stream of those open is busy. Pushes in flight are at most
    ///     connections × APNs' streams per connection, and pushes a second about that over APNs' latency
    ///     (docs/PERFORMANCE.md).
    /// - Throws: ``InvalidSetting`` for a URL that is not `https://HOST:PORT`, a connection count out of range, or a
    ///   CA file that is unreadable or names Apple's hosts while APNs may be reached beyond this machine.
    package init(reader: ConfigReader) throws {
        func endpoint(_ key: String) throws -> APNsClient.Endpoint? {
            guard let url = reader.text(key) else { return nil }
            guard let endpoint = APNsClient.Endpoint(url: url) else {
                throw InvalidSetting(key: key, value: url, allowed: "must look like https://HOST:PORT")
            }
            return endpoint
        }
        let push = try endpoint("apns-push-url")
        let management = try endpoint("apns-management-url")
        let caFile = reader.text("apns-ca-file")
        if let caFile {
            let claimed: [String]
            do {
                claimed = try APNsClient.appleHostNames(claimedBy: caFile)
            } catch {
                throw InvalidSetting(key: "apns-ca-file", value: caFile, allowed: "cannot be used: it \(error.message)")
            }
            if !claimed.isEmpty, !(push?.isLoopback ?? false) || !(management?.isLoopback ?? false) {
                throw InvalidSetting(
                    key: "apns-ca-file",
                    value: caFile,
                    allowed: "holds a certificate that claims Apple's APNs host names (\(claimed.joined(separator: ", "))), such as "
                        + "the APNs emulator's: it is trusted only when --apns-push-url and --apns-management-url are both on "
                        + "loopback (https://localhost:PORT, https://127.0.0.1:PORT or https://[::1]:PORT)"
                )
            }
        }
        let connections = try reader.wholeNumber("apns-connections", atLeast: 1, default: APNsClient.Configuration.defaultConnectionsPerEndpoint)
        guard connections <= 64 else {
            throw InvalidSetting(key: "apns-connections", value: "\(connections)", allowed: "must be a whole number from 1 to 64")
        }
        self.init(pushEndpoint: push, managementEndpoint: management, caFile: caFile, connectionsPerEndpoint: connections)
    }
}
