import LivecastStore

/// The bounds of client keys: an app embeds and publishes them, so anyone may call with one, and each device
/// (named by the request's `Livecast-Device-ID`) and each client address is bounded instead of the key.
package struct ClientLimits: Sendable, Hashable {
    /// Requests one device may make, across every instance (``ClientGate``). Defaults to 60 a minute, all 60 at once
    /// after a quiet minute.
    package var perDevice: RateLimit
    /// Requests with client keys one client address may make to one app (its devices together), across every
    /// instance. Defaults to 600 a minute, all 600 at once after a quiet minute.
    package var perAddress: RateLimit
    /// Live push-to-start tokens one device may have (one per attributes type). Defaults to 32.
    package var pushToStartTokensPerDevice: Int
    /// Running activities one device may have. Defaults to 32.
    package var activitiesPerDevice: Int
    /// New devices client keys may register for one app in an hour, across every instance (``ClientGate``):
    /// a stranger makes up device ids at will, each with the allowances above afresh. Defaults to 10,000.
    package var newDevicesPerHour: Int
    /// The share of ``newDevicesPerHour`` one client address (an IPv4 address, an IPv6 /64) may bring, in percent,
    /// so that one address cannot take the ceiling from everyone else's new installs. Defaults to 5 (500 of 10,000).
    /// A registration with a valid identity assertion counts against neither.
    package var addressSharePercent: Int

    /// The new devices one client address may bring an hour: its share of the ceiling, at least one.
    package var newDevicesPerAddress: Int { max(1, self.newDevicesPerHour * self.addressSharePercent / 100) }

    package init(
        perDevice: RateLimit = .perMinute(60),
        perAddress: RateLimit = .perMinute(600),
        pushToStartTokensPerDevice: Int = 32,
        activitiesPerDevice: Int = 32,
        newDevicesPerHour: Int = 10_000,
        addressSharePercent: Int = 5
    ) {
        self.perDevice = perDevice
        self.perAddress = perAddress
        self.pushToStartTokensPerDevice = pushToStartTokensPerDevice
        self.activitiesPerDevice = activitiesPerDevice
        self.newDevicesPerHour = newDevicesPerHour
        self.addressSharePercent = addressSharePercent
    }
}

extension RateLimit {
    /// The same limit, as the gate in PostgreSQL keeps it.
    var bucket: ClientGate.Bucket { ClientGate.Bucket(ratePerSecond: self.ratePerSecond, burst: self.burst) }

    /// `requests` a minute, all of them at once after a quiet minute.
    package static func perMinute(_ requests: Double) -> RateLimit {
        RateLimit(ratePerSecond: requests / 60, burst: requests)
    }
}
