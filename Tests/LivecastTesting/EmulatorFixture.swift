import APNs
import APNsEmulator
import Foundation
import LivecastCore

/// A running emulator that trusts a fresh openssl key, with curl set up to trust its certificate.
package struct EmulatorFixture: Sendable {
    /// The bundle id tests push to.
    package static let bundleID = "com.example.game"
    /// The topic of Live Activity pushes for ``bundleID``.
    package static let topic = APNsPushType.liveactivity.topic(forBundleID: Self.bundleID)!

    package let emulator: APNsEmulator
    package let key: ProviderKey
    package let curl: Curl
    /// A valid provider token for ``key``, issued now.
    package let token: String
    private let directory: TemporaryDirectory

    /// `https://localhost:<push port>`.
    package var pushURL: String { "https://localhost:\(self.emulator.pushPort)" }
    /// `https://localhost:<management port>`.
    package var managementURL: String { "https://localhost:\(self.emulator.managementPort)" }

    /// Starts an emulator for the duration of `body`.
    /// - Parameters:
    ///   - configure: Changes to the default configuration (its trusted keys already hold the fixture's key).
    ///   - body: The test.
    package static func with<Result>(
        _ configure: (inout APNsEmulator.Configuration) -> Void = { _ in },
        _ body: (EmulatorFixture) async throws -> Result
    ) async throws -> Result {
        let key = try await ProviderKey.make()
        var configuration = APNsEmulator.Configuration(trustedKeys: [try key.trusted()])
        configure(&configuration)
        let emulator = try await APNsEmulator.start(configuration: configuration)
        let directory = try TemporaryDirectory()
        let caFile = directory.path("emulator.pem")
        try emulator.certificatePEM.write(toFile: caFile, atomically: false, encoding: .utf8)
        let fixture = EmulatorFixture(
            emulator: emulator,
            key: key,
            curl: Curl(caFile: caFile),
            token: try await key.token(),
            directory: directory
        )
        do {
            let result = try await body(fixture)
            await emulator.shutdown()
            return result
        } catch {
            await emulator.shutdown()
            throw error
        }
    }

    /// The headers of a Live Activity device push, with the fixture's token.
    package func deviceHeaders(priority: Int = 10) -> [(String, String)] {
        [
            ("authorization", "bearer \(self.token)"),
            ("apns-push-type", APNsPushType.liveactivity.headerValue),
            ("apns-topic", Self.topic),
            ("apns-priority", String(priority)),
        ]
    }

    /// A device push request.
    package func devicePushRequest(token: String, payload: String, headers: [(String, String)]? = nil) -> Curl.Request {
        Curl.Request("POST", "\(self.pushURL)/3/device/\(token)", headers: headers ?? self.deviceHeaders(), body: payload)
    }

    /// Sends a device push.
    package func devicePush(token: String, payload: String, headers: [(String, String)]? = nil) async throws -> Curl.Response {
        try await self.curl.send(self.devicePushRequest(token: token, payload: payload, headers: headers))
    }

    /// The headers of a broadcast to a No Storage channel.
    package func broadcastHeaders(channelID: String, expiration: Int = 0, priority: Int = 10) -> [(String, String)] {
        [
            ("authorization", "bearer \(self.token)"),
            ("apns-channel-id", channelID),
            ("apns-push-type", APNsPushType.liveactivity.headerValue),
            ("apns-expiration", String(expiration)),
            ("apns-priority", String(priority)),
        ]
    }

    /// Sends a broadcast.
    package func broadcast(
        payload: String,
        headers: [(String, String)],
        bundleID: String = EmulatorFixture.bundleID
    ) async throws -> Curl.Response {
        try await self.curl.send(Curl.Request("POST", "\(self.pushURL)/4/broadcasts/apps/\(bundleID)", headers: headers, body: payload))
    }

    /// Creates a channel through the management API. - Returns: its id.
    package func createChannel(storagePolicy: Int = 0, bundleID: String = EmulatorFixture.bundleID) async throws -> String {
        let response = try await self.curl.send(
            Curl.Request(
                "POST",
                "\(self.managementURL)/1/apps/\(bundleID)/channels",
                headers: [("authorization", "bearer \(self.token)")],
                body: #"{"message-storage-policy": \#(storagePolicy), "push-type": "LiveActivity"}"#
            )
        )
        guard response.status == 201, let id = response.headers["apns-channel-id"] else {
            throw TestFailure("channel creation answered \(response.status) \(response.body)")
        }
        return id
    }

    /// Calls the `/emulator` control plane. - Returns: the JSON answer and status.
    package func control(_ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, json: JSONValue) {
        let response = try await self.curl.send(Curl.Request(method, "\(self.pushURL)/emulator/\(path)", body: body))
        return (response.status, response.json ?? .null)
    }

    /// Adds a device through the control plane. - Returns: its snapshot as JSON.
    package func addDevice(osVersion: String = "18.2", attributesTypes: [String] = ["GameAttributes"]) async throws -> JSONValue {
        let tokens = attributesTypes.map { #""\#($0)": """# }.joined(separator: ",")
        let (status, json) = try await self.control(
            "POST",
            "devices",
            body: #"{"bundleId": "\#(Self.bundleID)", "osVersion": "\#(osVersion)", "pushToStartTokens": {\#(tokens)}}"#
        )
        guard status == 201 else { throw TestFailure("adding a device answered \(status)") }
        return json
    }

    /// One device as the control plane shows it.
    package func device(_ id: String) async throws -> JSONValue {
        let (status, json) = try await self.control("GET", "devices/\(id)")
        guard status == 200 else { throw TestFailure("reading device \(id) answered \(status)") }
        return json
    }

    /// An APNs client pointed at this emulator's ports, trusting its certificate through the configuration alone,
    /// signing with the fixture's key. Shut it down when done.
    package func makeClient(
        clock: any WallClock = SystemWallClock(),
        _ adjust: (inout APNsClient.Configuration) -> Void = { _ in }
    ) throws -> APNsClient {
        var configuration = APNsClient.Configuration(environment: .sandbox)
        configuration.pushEndpoint = .init(host: "localhost", port: self.emulator.pushPort)
        configuration.broadcastEndpoint = configuration.pushEndpoint
        configuration.managementEndpoint = .init(host: "localhost", port: self.emulator.managementPort)
        configuration.additionalTrustRootFiles = [self.curl.caFile]
        configuration.requestTimeout = .seconds(60)  // the whole suite shares two cores
        adjust(&configuration)
        return try APNsClient(
            configuration: configuration,
            credentials: try APNsCredentials(teamID: self.key.teamID, keyID: self.key.keyID, p8File: self.key.path),
            clock: clock
        )
    }
}
