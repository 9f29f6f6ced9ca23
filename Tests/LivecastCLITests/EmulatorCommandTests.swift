import Foundation
import LivecastCore
import LivecastTesting
import LocalPostgres
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `livecast emulator`'s command-line contract, run as a separate process.
@Suite struct EmulatorCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func printsReadyServesBothPortsAndStopsOnSignal(_ signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        let first = try await ProviderKey.make(teamID: "TEAM000001", keyID: "KEY0000001")
        let second = try await ProviderKey.make(teamID: "TEAM000002", keyID: "KEY0000002")
        let (port, managementPort) = (try FreePort.next(), try FreePort.next())
        let certificate = directory.path("emulator.pem")
        let emulator = try await BackgroundProcess(
            self.livecast,
            [
                "emulator", "--port", String(port), "--management-port", String(managementPort), "--cert-out", certificate,
                "--trust-key", "\(first.teamID):\(first.keyID):\(first.path)",
                "--trust-key", "\(second.teamID):\(second.keyID):\(second.path)",
            ]
        )
        #expect(try await emulator.waitForLine("ready"), "stderr: \(emulator.stderr)")
        #expect(emulator.stdout == "ready\n")
        let curl = Curl(caFile: certificate)
        for key in [first, second] {
            let listed = try await curl.send(
                .init(
                    "GET",
                    "https://localhost:\(managementPort)/1/apps/com.example.game/all-channels",
                    headers: [("authorization", "bearer \(try await key.token())")]
                )
            )
            #expect(listed.status == 200)
        }
        let devices = try await curl.send(.init("GET", "https://localhost:\(port)/emulator/devices"))
        #expect(devices.json?["devices"] == .array([]))
        emulator.signal(signal)
        #expect(try await emulator.waitForExit(timeout: .seconds(15)) == 0)
    }

    @Test(arguments: [
        (["--trust-key", "nonsense"], "TEAMID:KEYID:PATH"),
        (["--trust-key", "TEAM:KEY:/no/such/file.p8"], "cannot read key file"),
        (["--fault-script", "429,teapot"], "--fault-script"),
        (["--environment", "staging"], "sandbox or production"),
        (["--fault-share", "2"], "--fault-share"),
    ])
    func badOptionsFailWithAClearMessage(_ options: [String], _ message: String) async throws {
        let directory = try TemporaryDirectory()
        let result = try await ExternalProcess.run(
            self.livecast,
            ["emulator", "--port", "0", "--management-port", "0", "--cert-out", directory.path("c.pem")] + options
        )
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(!result.stdout.contains("ready"))
    }

    @Test func generatedKeyIsWrittenAndTrusted() async throws {
        let directory = try TemporaryDirectory()
        let (port, managementPort) = (try FreePort.next(), try FreePort.next())
        let keyPath = directory.path("demo.p8")
        let emulator = try await BackgroundProcess(
            self.livecast,
            [
                "emulator", "--port", String(port), "--management-port", String(managementPort), "--cert-out", directory.path("c.pem"),
                "--generate-key", "DEMOTEAM01:DEMOKEY001:\(keyPath)",
            ]
        )
        #expect(try await emulator.waitForLine("ready"), "stderr: \(emulator.stderr)")
        let token = try await ExternalProcess.run("bash", [Fixtures.makeJWTScript, keyPath, "DEMOKEY001", "DEMOTEAM01"]).stdout
        let listed = try await Curl(caFile: directory.path("c.pem")).send(
            .init(
                "GET",
                "https://localhost:\(managementPort)/1/apps/com.example.game/all-channels",
                headers: [("authorization", "bearer \(token.trimmingCharacters(in: .whitespacesAndNewlines))")]
            )
        )
        #expect(listed.status == 200)
        emulator.signal()
        #expect(try await emulator.waitForExit() == 0)
    }
}
