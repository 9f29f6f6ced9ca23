import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// `livecast send`'s contract, against the emulator.
@Suite struct SendCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    private func send(_ fixture: EmulatorFixture, _ target: [String], payload: String, extra: [String] = []) async throws -> ExternalProcess.Result {
        let directory = try TemporaryDirectory()
        let payloadFile = directory.path("payload.json")
        try payload.write(toFile: payloadFile, atomically: false, encoding: .utf8)
        return try await ExternalProcess.run(
            self.livecast,
            [
                "send", "--bundle-id", EmulatorFixture.bundleID, "--team-id", fixture.key.teamID, "--key-id", fixture.key.keyID,
                "--key", fixture.key.path,
            ] + target + [
                "--payload", payloadFile, "--environment", "sandbox",
                "--push-url", fixture.pushURL, "--ca", fixture.curl.caFile,
            ] + extra
        )
    }

    private static let start =
        #"{"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"start","content-state":{"home":0},"attributes-type":"GameAttributes","attributes":{"team":"Giants"},"alert":{"title":"Kick-off"},"input-push-token":1}}"#

    @Test func deliveredPushPrintsStatusAndIDsAndExitsZero() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let token = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let result = try await self.send(
                fixture,
                ["--device-token", token],
                payload: Self.start,
                extra: ["--priority", "10", "--expiration", "0"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first == "status: 200")
            #expect(lines.contains { $0.hasPrefix("apns-id: ") })
            #expect(fixture.emulator.devices().first?.activities.count == 1)
        }
    }

    @Test func refusedPushPrintsTheReasonAndExitsNonZero() async throws {
        try await EmulatorFixture.with { fixture in
            let result = try await self.send(fixture, ["--device-token", "abcd"], payload: Self.start)
            #expect(result.status == 1)
            #expect(result.stdout.split(separator: "\n").prefix(2) == ["status: 400", "reason: BadDeviceToken"])
        }
    }

    @Test func broadcastToAChannel() async throws {
        try await EmulatorFixture.with { fixture in
            let channel = try await fixture.createChannel(storagePolicy: 0)
            let update = #"{"aps":{"timestamp":1,"event":"update","content-state":{"home":1}}}"#
            let result = try await self.send(fixture, ["--channel-id", channel], payload: update, extra: ["--priority", "5"])
            #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("status: 200"))
            #expect(result.stdout.contains("apns-request-id: "))
            let unknown = try await self.send(fixture, ["--channel-id", "dHN0LXNyY2gtY2hubA=="], payload: update)
            #expect(unknown.status == 1)
            #expect(unknown.stdout.contains("reason: ChannelNotRegistered"))
        }
    }

    @Test func badArgumentsAreRefusedBeforeSending() async throws {
        try await EmulatorFixture.with { fixture in
            let cases: [([String], String)] = [
                ([], "exactly one of --device-token and --channel-id"),
                (["--device-token", "abcd", "--channel-id", "x"], "exactly one"),
                (["--device-token", "xyz"], "--device-token must be hex"),
                (["--device-token", "abcd", "--priority", "7"], "--priority must be 5 or 10"),
                (["--device-token", "abcd", "--push-url", "ftp://x"], "--push-url"),
            ]
            for (arguments, message) in cases {
                let result = try await ExternalProcess.run(
                    self.livecast,
                    ["send", "--bundle-id", "b", "--team-id", "t", "--key-id", "k", "--key", fixture.key.path, "--payload", "/dev/null"] + arguments
                )
                #expect(result.status != 0)
                #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            }
            let notJSON = try await self.send(fixture, ["--device-token", "abcd"], payload: "hello")
            #expect(notJSON.status != 0)
            #expect(notJSON.stderr.contains("is not JSON"))
            #expect(fixture.emulator.devices().isEmpty)
        }
    }
}
