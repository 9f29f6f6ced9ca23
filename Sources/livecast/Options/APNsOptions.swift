import ArgumentParser
import LivecastService

/// The APNs hosts and trust to use instead of Apple's (the emulator, a proxy).
struct APNsOptions: ParsableArguments {
    @Option(help: "Push and broadcast to https://HOST:PORT instead of Apple's host (default: $LIVECAST_APNS_PUSH_URL).")
    var apnsPushUrl: String?

    @Option(help: "Manage channels at https://HOST:PORT instead of Apple's host (default: $LIVECAST_APNS_MANAGEMENT_URL).")
    var apnsManagementUrl: String?

    @Option(help: "Also trust the certificates in this PEM file (default: $LIVECAST_APNS_CA_FILE).")
    var apnsCaFile: String?

    @Option(help: "HTTP/2 connections per app and APNs host, 1 to 64 (default: $LIVECAST_APNS_CONNECTIONS, else 2).")
    var apnsConnections: Int?

    /// These flags, by setting key.
    var flags: [String: String?] {
        [
            "apns-push-url": self.apnsPushUrl, "apns-management-url": self.apnsManagementUrl, "apns-ca-file": self.apnsCaFile,
            "apns-connections": self.apnsConnections.map(String.init),
        ]
    }

    /// The overrides for every app's client (`AppClients.Overrides(reader:)`). - Throws: `ValidationError` for a
    /// URL that is not https://HOST:PORT.
    func overrides(_ settings: LivecastConfig) throws -> AppClients.Overrides {
        try settings.read(flags: self.flags) { try AppClients.Overrides(reader: $0) }
    }
}
