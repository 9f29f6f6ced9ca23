import APNs
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

    /// The overrides for every app's client. - Throws: `ValidationError` for a URL that is not https://HOST:PORT.
    func overrides(_ settings: Settings) throws -> AppClients.Overrides {
        func endpoint(_ flag: String?, env: String, key: String) throws -> APNsClient.Endpoint? {
            guard let url = settings.value(flag, env: env, key: key) else { return nil }
            guard let endpoint = APNsClient.Endpoint(url: url) else { throw ValidationError("--\(key) must look like https://HOST:PORT") }
            return endpoint
        }
        return AppClients.Overrides(
            pushEndpoint: try endpoint(self.apnsPushUrl, env: "LIVECAST_APNS_PUSH_URL", key: "apns-push-url"),
            managementEndpoint: try endpoint(self.apnsManagementUrl, env: "LIVECAST_APNS_MANAGEMENT_URL", key: "apns-management-url"),
            caFile: settings.value(self.apnsCaFile, env: "LIVECAST_APNS_CA_FILE", key: "apns-ca-file")
        )
    }
}
