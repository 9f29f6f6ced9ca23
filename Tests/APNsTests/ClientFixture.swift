import APNs
import APNsEmulator
import Foundation
import LivecastTesting

/// An emulator and an APNs client pointed at it, trusting its certificate through the configuration alone.
struct ClientFixture {
    let emulator: EmulatorFixture
    let client: APNsClient

    static func with<Result>(
        emulator configure: (inout APNsEmulator.Configuration) -> Void = { _ in },
        client adjust: (inout APNsClient.Configuration) -> Void = { _ in },
        clock: any WallClock = SystemWallClock(),
        _ body: (ClientFixture) async throws -> Result
    ) async throws -> Result {
        try await EmulatorFixture.with(configure) { emulator in
            let client = try emulator.makeClient(clock: clock, adjust)
            do {
                let result = try await body(ClientFixture(emulator: emulator, client: client))
                await client.shutdown()
                return result
            } catch {
                await client.shutdown()
                throw error
            }
        }
    }

    static let bundleID = EmulatorFixture.bundleID

    static func update(_ timestamp: Int = Int(Date().timeIntervalSince1970), home: Int = 1) -> [UInt8] {
        Array(#"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"home":\#(home)}}}"#.utf8)
    }

    static func start(_ timestamp: Int = Int(Date().timeIntervalSince1970)) -> [UInt8] {
        Array(
            #"{"aps":{"timestamp":\#(timestamp),"event":"start","content-state":{"home":0},"attributes-type":"GameAttributes","attributes":{"team":"Giants"},"alert":{"title":"Kick-off"},"input-push-token":1}}"#
                .utf8
        )
    }

    /// A device with a push-to-start token for `GameAttributes`. - Returns: its id and token.
    func device(osVersion: String = "18.2") throws -> (id: String, token: String) {
        let device = try self.emulator.emulator.addDevice(bundleID: Self.bundleID, osVersion: osVersion, pushToStartTokens: ["GameAttributes": ""])
        return (device.id, device.pushToStartTokens["GameAttributes"]!)
    }
}
