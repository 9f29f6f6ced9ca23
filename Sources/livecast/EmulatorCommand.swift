import APNsEmulator
import ArgumentParser
import Crypto
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

/// `livecast emulator`: runs the APNs emulator until SIGINT or SIGTERM.
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run the APNs emulator: device pushes, broadcasts and channel management over TLS + HTTP/2.",
        discussion: """
            Prints one line, `ready`, on stdout once both ports accept connections, and stops cleanly on SIGINT or \
            SIGTERM. Simulated devices, faults and the device clock are driven through /emulator on the push port.
            """
    )

    @Option(help: "The port for device pushes, broadcasts and /emulator (0 picks a free port).")
    var port = 2197

    @Option(help: "The port for channel management (0 picks a free port).")
    var managementPort = 2195

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Where to write the emulator's self-signed certificate (PEM) for clients to trust.")
    var certOut = "livecast-emulator.pem"

    @Option(
        help: """
            A host name for the certificate besides localhost and the loopback addresses, instead of Apple's APNs \
            host names (the default). Repeatable. livecast serve trusts a certificate with Apple's names only on \
            loopback: an emulator reached over a network names itself here.
            """
    )
    var certificateHost: [String] = []

    @Option(help: "Trust provider tokens signed by this key: TEAMID:KEYID:PATH, PATH a .p8 or public-key PEM. Repeatable.")
    var trustKey: [String] = []

    @Option(help: "Make a new .p8 key at PATH and trust it: TEAMID:KEYID:PATH.")
    var generateKey: String?

    @Option(help: "sandbox or production (sandbox answers carry apns-unique-id on device pushes).")
    var environment = "sandbox"

    @Option(help: "MAX_CONCURRENT_STREAMS after a connection's first authenticated request.")
    var maxConcurrentStreams = 1000

    @Option(help: "How long each answer waits, as APNs' take tens of milliseconds: 40ms, or 40ms±10ms (uniform) (default: none).")
    var latency: String?

    @Option(help: "How many channels one app may have.")
    var channelLimit = 10_000

    @Flag(help: "Answer 200 to device pushes for tokens no simulated device holds (load tests).")
    var acceptUnknownTokens = false

    @Option(help: "Priority-10 pushes a device accepts per hour (default: no limit).")
    var priority10Budget: Int?

    @Option(help: "Seconds a started activity stays active before the simulated device ends it, as iOS does at 8 hours.")
    var activityLifetime = 8 * 3600

    @Option(
        help:
            "Push-to-start notifications a device takes in --push-to-start-window before it ignores the rest (APNs still answers 200); 0 for no limit."
    )
    var pushToStartBudget = APNsEmulator.PushToStartBudget.apple.starts

    @Option(help: "The rolling window of --push-to-start-budget, in seconds.")
    var pushToStartWindow = APNsEmulator.PushToStartBudget.apple.window

    @Option(help: "Answers for the next requests, comma-separated: 429, 503:Shutdown, goaway, goaway:IdleTimeout, drop, ok (no fault).")
    var faultScript: String?

    @Option(help: "The share of requests (0 to 1) answered with a random --fault-answers entry.")
    var faultShare = 0.0

    @Option(help: "What --fault-share answers, comma-separated.")
    var faultAnswers = "429,500,503"

    @Option(help: "A token that answers 410 Unregistered: TOKEN or TOKEN:MILLISECONDS. Repeatable.")
    var unregistered: [String] = []

    @Option(help: "An app without the broadcast capability (FeatureNotEnabled). Repeatable.")
    var broadcastDisabled: [String] = []

    @Flag(help: "Record every device push and broadcast as it arrived, with its answer, for GET /emulator/wire.")
    var recordWire = false

    @Option(help: "A data-export token the /v1/dataExports API accepts for one team and app: TEAMID:BUNDLE:TOKEN. Repeatable.")
    var dataExportToken: [String] = []

    func validate() throws {
        guard ["sandbox", "production"].contains(self.environment) else {
            throw ValidationError("--environment must be sandbox or production")
        }
        guard (0...65535).contains(self.port), (0...65535).contains(self.managementPort) else {
            throw ValidationError("ports must be between 0 and 65535")
        }
        guard self.maxConcurrentStreams >= 1, self.channelLimit >= 0 else {
            throw ValidationError("--max-concurrent-streams must be at least 1 and --channel-limit not negative")
        }
        guard (0...1).contains(self.faultShare) else {
            throw ValidationError("--fault-share must be between 0 and 1")
        }
        if let latency, EmulatorLatency(text: latency) == nil {
            throw ValidationError("--latency must be a time in ms or s up to 60 s, with an optional ±jitter: 40ms or 40ms±10ms")
        }
        if let priority10Budget, priority10Budget < 0 {
            throw ValidationError("--priority10-budget must not be negative")
        }
        guard self.activityLifetime >= 1 else {
            throw ValidationError("--activity-lifetime must be at least 1 second")
        }
        guard self.pushToStartBudget >= 0, self.pushToStartWindow >= 1 else {
            throw ValidationError("--push-to-start-budget must not be negative and --push-to-start-window must be at least 1 second")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "livecast.emulator")
        let configuration = try self.makeConfiguration()
        let emulator = try await APNsEmulator.start(configuration: configuration)
        do {
            try emulator.certificatePEM.write(toFile: self.certOut, atomically: false, encoding: .utf8)
        } catch {
            await emulator.shutdown()
            throw ValidationError("cannot write --cert-out \(self.certOut): \(error.localizedDescription)")
        }
        logger.info(
            "APNs emulator listening",
            metadata: [
                "push": "\(self.host):\(emulator.pushPort)",
                "management": "\(self.host):\(emulator.managementPort)",
                "certificate": "\(self.certOut)",
                "trusted_keys": "\(configuration.trustedKeys.map { "\($0.teamID):\($0.keyID)" })",
            ]
        )
        // Written straight to the file descriptor so a reading process sees it at once, whatever the buffering.
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let group = ServiceGroup(
            services: [EmulatorService(emulator: emulator)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
    }

    private func makeConfiguration() throws -> APNsEmulator.Configuration {
        var trustedKeys: [TrustedKey] = []
        for specification in self.trustKey {
            do {
                trustedKeys.append(try TrustedKey(specification: specification))
            } catch {
                throw ValidationError("--trust-key: \(error.message)")
            }
        }
        if let generateKey {
            trustedKeys.append(try Self.generateKey(generateKey))
        }
        var configuration = APNsEmulator.Configuration(
            host: self.host,
            pushPort: self.port,
            managementPort: self.managementPort,
            trustedKeys: trustedKeys,
            environment: self.environment,
            maximumConcurrentStreams: self.maxConcurrentStreams,
            channelLimit: self.channelLimit,
            acceptsUnknownTokens: self.acceptUnknownTokens,
            priority10Budget: self.priority10Budget,
            activityLifetime: self.activityLifetime,
            pushToStartBudget: self.pushToStartBudget == 0
                ? nil : APNsEmulator.PushToStartBudget(starts: self.pushToStartBudget, window: self.pushToStartWindow),
            broadcastDisabledBundleIDs: Set(self.broadcastDisabled),
            faults: try self.makeFaultPlan(),
            recordsWire: self.recordWire,
            certificateHostNames: self.certificateHost.isEmpty ? APNsEmulator.Configuration.appleHostNames : self.certificateHost
        )
        configuration.latency = self.latency.flatMap(EmulatorLatency.init(text:)) ?? .none
        configuration.dataExportTokens = try self.dataExportToken.map { entry in
            let parts = entry.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
                throw ValidationError("--data-export-token: expected TEAMID:BUNDLE:TOKEN, got '\(entry)'")
            }
            return DataExportToken(token: parts[2], teamID: parts[0], bundleID: parts[1])
        }
        return configuration
    }

    private func makeFaultPlan() throws -> FaultPlan {
        func answers(_ text: String?, option: String) throws -> [FaultAnswer] {
            try (text ?? "").split(separator: ",").map { item in
                guard let answer = FaultAnswer(text: item.trimmingCharacters(in: .whitespaces)) else {
                    throw ValidationError("\(option): '\(item)' is not a status (429, 503:Shutdown), goaway[:REASON], drop or ok")
                }
                return answer
            }
        }
        var unregisteredTokens: [String: Int] = [:]
        for entry in self.unregistered {
            let parts = entry.split(separator: ":", maxSplits: 1)
            guard let token = parts.first, let millis = parts.count > 1 ? Int(parts[1]) : Int(Date().timeIntervalSince1970 * 1000) else {
                throw ValidationError("--unregistered: expected TOKEN or TOKEN:MILLISECONDS, got '\(entry)'")
            }
            unregisteredTokens[token.lowercased()] = millis
        }
        return FaultPlan(
            script: try answers(self.faultScript, option: "--fault-script"),
            failureShare: self.faultShare,
            failureAnswers: try answers(self.faultAnswers, option: "--fault-answers"),
            unregisteredTokens: unregisteredTokens
        )
    }

    /// Writes a new P-256 `.p8` key to the path in `TEAMID:KEYID:PATH` and returns it as a trusted key.
    private static func generateKey(_ specification: String) throws -> TrustedKey {
        let parts = specification.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw ValidationError("--generate-key: expected TEAMID:KEYID:PATH, got '\(specification)'")
        }
        let key = P256.Signing.PrivateKey()
        // A private key: readable by its owner only.
        let written = FileManager.default.createFile(
            atPath: parts[2],
            contents: Data(key.pemRepresentation.utf8),
            attributes: [.posixPermissions: 0o600]
        )
        guard written else {
            throw ValidationError("--generate-key: cannot write \(parts[2])")
        }
        return TrustedKey(teamID: parts[0], keyID: parts[1], publicKey: key.publicKey)
    }
}

/// Keeps the emulator running until graceful shutdown, then closes it.
private struct EmulatorService: Service {
    let emulator: APNsEmulator

    func run() async throws {
        try? await gracefulShutdown()
        await self.emulator.shutdown()
    }
}
