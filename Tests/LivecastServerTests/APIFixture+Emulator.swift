import APNs
import APNsEmulator
import HTTPTypes
import HummingbirdTesting
import LivecastService
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

extension APIFixture {
    /// Runs `body` with the emulator (recording the wire, configured further by `configure`), a fresh fixture whose apps
    /// send to it, and a dispatcher over the fixture's database sending through one APNs client to the emulator (the
    /// test drains it), with `dispatcherSettings`.
    static func withEmulator(
        _ name: String,
        configuration: LivecastAPI.Configuration = .init(),
        testing: TestingSetup = .router,
        dispatcherSettings: Dispatcher.Settings = .init(),
        emulator configure: (inout APNsEmulator.Configuration) -> Void = { _ in },
        _ body: @Sendable (APIFixture, any TestClientProtocol, EmulatorFixture, Dispatcher) async throws -> Void
    ) async throws {
        try await EmulatorFixture.with({
            $0.recordsWire = true
            configure(&$0)
        }) { emulator in
            let apns = try emulator.makeClient()
            defer { Task { await apns.shutdown() } }
            try await APIFixture.with(name, emulator: emulator, configuration: configuration, testing: testing) { fixture, client in
                let dispatcher = Dispatcher(
                    database: fixture.client,
                    appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
                    settings: dispatcherSettings,
                    logger: fixture.store.logger
                )
                try await body(fixture, client, emulator, dispatcher)
            }
        }
    }

    /// An emulator device with a push-to-start token for `GameAttributes`, registered through the API.
    func registeredDevice(osVersion: String, emulator: EmulatorFixture, client: any TestClientProtocol) async throws -> DeviceSnapshot {
        let device = try emulator.emulator.addDevice(
            bundleID: EmulatorFixture.bundleID,
            osVersion: osVersion,
            pushToStartTokens: ["GameAttributes": ""]
        )
        let registered = try await client.send(
            .put,
            "/v1/apps/com.example.game/push-to-start-tokens/\(device.id)/GameAttributes",
            key: self.key(.backend),
            body: #"{"token": "\#(device.pushToStartTokens["GameAttributes"]!)", "osVersion": "\#(osVersion)"}"#
        )
        #expect(registered.status == .created || registered.status == .ok, "\(registered.text)")
        return device
    }
}
