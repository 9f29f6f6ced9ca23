import APNs
import ArgumentParser
import Foundation
import LivecastCore

/// `livecast send`: sends one Live Activity push and prints APNs' answer.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send one Live Activity push to a device token or a broadcast channel and print APNs' answer.",
        discussion: """
            Prints `status: N`, then `reason: R` on errors, and the ids APNs returned (`apns-id`, \
            `apns-unique-id`, `apns-request-id`). Exits 0 only when APNs answered 200.
            """
    )

    @Option(help: "The app's bundle id.")
    var bundleId: String

    @OptionGroup var signingKey: SigningKeyOptions

    @Option(help: "The .p8 signing key file.")
    var key: String

    @Option(help: "Send to this device token (hex).")
    var deviceToken: String?

    @Option(help: "Broadcast to this channel id (base64).")
    var channelId: String?

    @Option(help: "The JSON payload file.")
    var payload: String

    @Option(help: "sandbox or production.")
    var environment = "sandbox"

    @Option(help: "Send to https://HOST:PORT instead of Apple's host for the environment.")
    var pushUrl: String?

    @Option(help: "Also trust the certificates in this PEM file.")
    var ca: String?

    @Option(help: "apns-priority: 5 or 10.")
    var priority = 10

    @Option(help: "apns-expiration, seconds since 1970 (0: try once). Broadcasts default to 0.")
    var expiration: Int?

    @Option(help: "Seconds to wait for APNs' answer, connecting included.")
    var timeout = 30

    func validate() throws {
        guard (self.deviceToken == nil) != (self.channelId == nil) else {
            throw ValidationError("give exactly one of --device-token and --channel-id")
        }
        guard APNsEnvironment(rawValue: self.environment) != nil else {
            throw ValidationError("--environment must be sandbox or production")
        }
        guard APNsPriority(rawValue: self.priority) != nil else {
            throw ValidationError("--priority must be 5 or 10")
        }
        if let pushUrl, APNsClient.Endpoint(url: pushUrl) == nil {
            throw ValidationError("--push-url must look like https://HOST:PORT")
        }
        if let deviceToken, DeviceToken.normalized(deviceToken) == nil {
            throw ValidationError("--device-token must be hex")
        }
        if let expiration, expiration < 0 {
            throw ValidationError("--expiration must not be negative")
        }
        guard (1...600).contains(self.timeout) else {
            throw ValidationError("--timeout must be between 1 and 600 seconds")
        }
    }

    func run() async throws {
        let credentials: APNsCredentials
        do {
            credentials = try APNsCredentials(teamID: self.signingKey.teamId, keyID: self.signingKey.keyId, p8File: self.key)
        } catch {
            throw ValidationError("--key: \(error.message)")
        }
        guard let payload = FileManager.default.contents(atPath: self.payload) else {
            throw ValidationError("--payload: cannot read \(self.payload)")
        }
        guard (try? JSONDecoder().decode(JSONValue.self, from: payload)) != nil else {
            throw ValidationError("--payload: \(self.payload) is not JSON")
        }
        self.warnIfNotALiveActivity(Array(payload))

        var configuration = APNsClient.Configuration(environment: APNsEnvironment(rawValue: self.environment) ?? .sandbox)
        if let pushUrl, let endpoint = APNsClient.Endpoint(url: pushUrl) {
            configuration.pushEndpoint = endpoint
            configuration.broadcastEndpoint = endpoint
        }
        if let ca { configuration.additionalTrustRootFiles = [ca] }
        configuration.connectionsPerEndpoint = 1
        configuration.requestTimeout = .seconds(self.timeout)
        let client: APNsClient
        do {
            client = try APNsClient(configuration: configuration, credentials: credentials)
        } catch {
            throw ValidationError("--ca: \(error.message)")
        }
        let outcome: APNsOutcome
        if let deviceToken {
            outcome = await client.send(
                DevicePush(
                    deviceToken: deviceToken,
                    bundleID: self.bundleId,
                    payload: Array(payload),
                    priority: APNsPriority(rawValue: self.priority) ?? .immediately,
                    expiration: self.expiration.map(APNsExpiration.timeIntervalSince1970InSeconds) ?? .none
                )
            )
        } else {
            outcome = await client.broadcast(
                BroadcastPush(
                    channelID: self.channelId!,
                    bundleID: self.bundleId,
                    payload: Array(payload),
                    priority: APNsPriority(rawValue: self.priority) ?? .immediately,
                    expiration: .timeIntervalSince1970InSeconds(self.expiration ?? 0)
                )
            )
        }
        await client.shutdown()
        Self.print(outcome)
        if outcome.status != 200 { throw ExitCode.failure }
    }

    private func warnIfNotALiveActivity(_ payload: [UInt8]) {
        let destination: PushDestination = self.channelId == nil ? .device : .broadcast
        do {
            _ = try LiveActivityPayload(decoding: payload).validated(for: destination)
        } catch {
            FileHandle.standardError.write(Data("warning: the payload is not a valid Live Activity payload: \(error); sending it anyway\n".utf8))
        }
    }

    private static func print(_ outcome: APNsOutcome) {
        if let error = outcome.transportError {
            Swift.print("error: \(error)")
            return
        }
        Swift.print("status: \(outcome.status ?? 0)")
        if let reason = outcome.reason { Swift.print("reason: \(reason)") }
        if let invalidSince = outcome.invalidSince { Swift.print("timestamp: \(invalidSince)") }
        if let apnsID = outcome.apnsID { Swift.print("apns-id: \(apnsID.uuidString.lowercased())") }
        if let requestID = outcome.requestID { Swift.print("apns-request-id: \(requestID.uuidString.lowercased())") }
        if let uniqueID = outcome.apnsUniqueID { Swift.print("apns-unique-id: \(uniqueID.uuidString.lowercased())") }
    }
}
