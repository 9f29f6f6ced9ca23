import ArgumentParser

/// What a client key (published inside every copy of an app) may do: its devices' and addresses' rates and caps.
struct ClientKeyOptions: ParsableArguments {
    @Option(help: "Requests a minute one device may make with a client key (default: $LIVECAST_CLIENT_DEVICE_RATE, else 60).")
    var clientDeviceRate: Double?

    @Option(help: "Requests a minute one client address may make with client keys (default: $LIVECAST_CLIENT_ADDRESS_RATE, else 600).")
    var clientAddressRate: Double?

    @Option(help: "Live push-to-start tokens one device may register with a client key (default: $LIVECAST_CLIENT_DEVICE_TOKENS, else 32).")
    var clientDeviceTokens: Int?

    @Option(help: "Running activities one device may register with a client key (default: $LIVECAST_CLIENT_DEVICE_ACTIVITIES, else 32).")
    var clientDeviceActivities: Int?

    @Option(
        help:
            "New devices client keys may register for one app in an hour, all instances together (default: $LIVECAST_CLIENT_NEW_DEVICES, else 10000)."
    )
    var clientNewDevices: Int?

    @Option(
        help:
            "Percent of --client-new-devices one client address may bring in an hour (default: $LIVECAST_CLIENT_ADDRESS_SHARE, else 5)."
    )
    var clientAddressShare: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "client-device-rate": self.clientDeviceRate.map { "\($0)" },
            "client-address-rate": self.clientAddressRate.map { "\($0)" },
            "client-device-tokens": self.clientDeviceTokens.map { "\($0)" },
            "client-device-activities": self.clientDeviceActivities.map { "\($0)" },
            "client-new-devices": self.clientNewDevices.map { "\($0)" },
            "client-address-share": self.clientAddressShare.map { "\($0)" },
        ]
    }
}
