import APNsEmulator
import ArgumentParser
import Foundation
import LivecastService
import LivecastStore
import LivecastTesting
import Testing

@testable import livecast

/// Settings that decide what Livecast trusts: the APNs CA file, which may not vouch for Apple's hosts beyond
/// loopback, and the master key, which is read from a file only.
@Suite struct TrustSettingsTests {
    /// The message of the `ValidationError` that reading `flags` (and `environment`) with `body` throws, `nil` if none.
    private func refusal(
        flags: [String: String?],
        environment: [String: String] = [:],
        _ body: (LivecastConfig, [String: String?]) throws -> Any
    ) throws -> String? {
        let config = try LivecastConfig(configFile: nil, environment: environment)
        do {
            _ = try body(config, flags)
            return nil
        } catch let error as ValidationError {
            return error.message
        }
    }

    private func overridesRefusal(_ flags: [String: String?]) throws -> String? {
        try self.refusal(flags: flags) { config, flags in try config.read(flags: flags) { try AppClients.Overrides(reader: $0) } }
    }

    @Test func apnsConnectionsAreOneToSixtyFour() throws {
        func connections(_ flags: [String: String?], environment: [String: String] = [:]) throws -> Int? {
            try LivecastConfig(configFile: nil, environment: environment).read(flags: flags) { try AppClients.Overrides(reader: $0) }
                .connectionsPerEndpoint
        }
        #expect(try connections([:]) == 2)
        #expect(try connections(["apns-connections": "6"]) == 6)
        #expect(try connections([:], environment: ["LIVECAST_APNS_CONNECTIONS": "64"]) == 64)
        for bad in ["0", "65", "two"] {
            let message = try #require(try self.overridesRefusal(["apns-connections": bad]), "\(bad)")
            #expect(message.hasPrefix("--apns-connections"), "\(message)")
        }
    }

    @Test func theEmulatorsCertificateIsTrustedOnlyWhenAPNsIsOnLoopback() async throws {
        let directory = try TemporaryDirectory()
        let emulator = try await APNsEmulator.start(configuration: .init())
        let named = try await APNsEmulator.start(configuration: .init(certificateHostNames: ["emulator"]))
        let appleNamed = directory.path("emulator.pem")
        let selfNamed = directory.path("named.pem")
        try emulator.certificatePEM.write(toFile: appleNamed, atomically: false, encoding: .utf8)
        try named.certificatePEM.write(toFile: selfNamed, atomically: false, encoding: .utf8)
        await emulator.shutdown()
        await named.shutdown()

        let loopback: [String: String?] = ["apns-push-url": "https://localhost:2197", "apns-management-url": "https://127.0.0.1:2195"]
        #expect(try self.overridesRefusal(loopback.merging(["apns-ca-file": appleNamed]) { $1 }) == nil)
        #expect(
            try self.overridesRefusal([
                "apns-push-url": "https://[::1]:2197", "apns-management-url": "https://[::1]:2195", "apns-ca-file": appleNamed,
            ]) == nil
        )

        let beyondLoopback: [[String: String?]] = [
            ["apns-ca-file": appleNamed],  // Apple's own hosts
            ["apns-push-url": "https://localhost:2197", "apns-ca-file": appleNamed],  // channels managed at Apple's
            ["apns-push-url": "https://emulator:2197", "apns-management-url": "https://emulator:2195", "apns-ca-file": appleNamed],
            ["apns-push-url": "https://127.example:2197", "apns-management-url": "https://localhost:2195", "apns-ca-file": appleNamed],
        ]
        for flags in beyondLoopback {
            let message = try #require(try self.overridesRefusal(flags), "\(flags)")
            #expect(message.hasPrefix("--apns-ca-file holds a certificate that claims Apple's APNs host names (api.push.apple.com"), "\(message)")
            #expect(message.contains("only when --apns-push-url and --apns-management-url are both on loopback"), "\(message)")
            #expect(message.hasSuffix("(\(appleNamed) from --apns-ca-file)"), "\(message)")
        }

        // An emulator that names itself, and a CA that names no host, are trusted for any URL.
        #expect(
            try self.overridesRefusal([
                "apns-push-url": "https://emulator:2197", "apns-management-url": "https://emulator:2195", "apns-ca-file": selfNamed,
            ]) == nil
        )
        let ca = directory.path("ca.pem")
        let made = try await ExternalProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", directory.path("ca.key"), "-out",
                ca,
                "-days", "1", "-subj", "/CN=Egress proxy CA",
            ]
        )
        #expect(made.status == 0, "\(made.stderr)")
        #expect(try self.overridesRefusal(["apns-ca-file": ca]) == nil)

        let missing = try self.overridesRefusal(["apns-ca-file": directory.path("missing.pem")])
        #expect(missing?.hasPrefix("--apns-ca-file cannot be used: it holds no readable PEM certificate") == true, "\(missing ?? "accepted")")
    }

    @Test func theEmulatorCommandNamesTheHostsItsCertificateIsFor() async throws {
        let directory = try TemporaryDirectory()
        let livecast = Fixtures.productsDirectory.appendingPathComponent("livecast").path
        let certificate = directory.path("emulator.pem")
        let emulator = try await BackgroundProcess(
            livecast,
            ["emulator", "--port", "0", "--management-port", "0", "--certificate-host", "emulator", "--cert-out", certificate]
        )
        defer { emulator.signal(SIGKILL) }
        #expect(try await emulator.waitForLine("ready"), "\(emulator.stderr)")
        let text = try await ExternalProcess.run("openssl", ["x509", "-in", certificate, "-noout", "-ext", "subjectAltName"])
        #expect(text.stdout.contains("DNS:localhost, DNS:emulator, IP Address:127.0.0.1"), "\(text.stdout)")
        #expect(!text.stdout.contains("apple.com"), "\(text.stdout)")
    }

    @Test func aMasterKeyGivenByValueIsRefusedNotIgnored() throws {
        let value = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
        let message = try self.refusal(flags: [:], environment: ["LIVECAST_MASTER_KEY": value]) { config, flags in
            try config.read(flags: flags) { try MasterKey(reader: $0) as Any }
        }
        #expect(message?.hasPrefix("--master-key is not read: write the base64 key to a file") == true, "\(message ?? "accepted")")
        #expect(message?.contains("--master-key-file") == true)
        #expect(message?.hasSuffix("(from LIVECAST_MASTER_KEY)") == true, "\(message ?? "")")
        #expect(message?.contains(value) == false, "the key is never repeated")

        let directory = try TemporaryDirectory()
        try value.write(toFile: directory.path("master.key"), atomically: false, encoding: .utf8)
        let fromFile = try self.refusal(flags: ["master-key-file": directory.path("master.key")]) { config, flags in
            try config.read(flags: flags) { try MasterKey(reader: $0) as Any }
        }
        #expect(fromFile == nil)
    }
}
