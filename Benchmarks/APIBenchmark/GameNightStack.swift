import APNsEmulator
import Foundation
import LocalPostgres
import NIOCore
import NIOPosix
import Subprocess
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What a game night runs against: a throwaway PostgreSQL of its own (so that it can be restarted), provisioned
/// through the CLI as scripts/bench.sh provisions the API section; the APNs emulator in this process, recording the
/// wire; and several `livecast serve` instances on that database, pointed at the emulator, which can be killed and
/// started again. The scale benchmark runs on it too, starting a different number of instances for each run.
final class GameNightStack: Sendable {
    /// The in-process emulator, recording every push and broadcast.
    let emulator: APNsEmulator
    /// The client, with every instance's endpoint.
    let client: GameNightClient
    /// `/v1/apps/{bundleId}`.
    let appPath: String
    /// The database every instance uses, for the CLI's `--database-url`.
    let databaseURL: String

    private let postgres: TemporaryPostgres
    private let options: GameNightOptions
    private let label: String
    private let serveArguments: [String]
    private let serves: Mutex<[ServeProcess?]>

    private init(
        emulator: APNsEmulator,
        client: GameNightClient,
        postgres: TemporaryPostgres,
        databaseURL: String,
        options: GameNightOptions,
        label: String,
        serveArguments: [String]
    ) {
        self.emulator = emulator
        self.client = client
        self.appPath = "/v1/apps/\(options.bundleId)"
        self.databaseURL = databaseURL
        self.postgres = postgres
        self.options = options
        self.label = label
        self.serveArguments = serveArguments
        self.serves = Mutex(Array(repeating: nil, count: client.instances))
    }

    /// Starts the stack with `instances` servers, runs `body` with it, and stops it, whether `body` throws or not.
    /// - Parameters:
    ///   - label: What the files in the work directory are named after: `LABEL-serve-N.out`, `LABEL-postgres.pid`.
    ///     Defaults to `gamenight`.
    ///   - startsInstances: Whether the servers are started before `body` runs, or left to it (``start(_:arguments:)``).
    ///     Defaults to `true`.
    ///   - emulator: The emulator's behaviour; the stack adds the app's signing key to its trusted keys. Defaults to
    ///     accepting any device token and recording the wire.
    ///   - serveFlags: `livecast serve` flags every instance gets beyond the stack's own, such as `--fan-out-slice`.
    ///     Defaults to none.
    static func run(
        _ options: GameNightOptions,
        label: String = "gamenight",
        instances: Int,
        startsInstances: Bool = true,
        emulator emulatorConfiguration: APNsEmulator.Configuration = APNsEmulator.Configuration(acceptsUnknownTokens: true, recordsWire: true),
        serveFlags: [String] = [],
        _ body: (GameNightStack) async throws -> Void
    ) async throws {
        try FileManager.default.createDirectory(atPath: options.work, withIntermediateDirectories: true)
        let postgres = try await TemporaryPostgres.start()
        try await ensuring {
            try Self.writePostgresProcessID(postgres, work: options.work, label: label)
            let databaseURL = "postgres://livecast@127.0.0.1:\(postgres.port)/postgres?sslmode=disable"
            let masterKeyFile = "\(options.work)/master.key"
            var key = [UInt8](repeating: 0, count: 32)
            for index in key.indices { key[index] = UInt8.random(in: .min ... .max) }
            try Data(key).base64EncodedString().write(toFile: masterKeyFile, atomically: true, encoding: .utf8)
            let apiKey = try await Self.provision(options, label: label, databaseURL: databaseURL, masterKeyFile: masterKeyFile)

            var configuration = emulatorConfiguration
            configuration.trustedKeys.append(try TrustedKey(specification: options.signingKey))
            let emulator = try await APNsEmulator.start(configuration: configuration)
            let clientLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let client = GameNightClient(instances: instances, apiKey: apiKey, on: clientLoops.next())
            try await ensuring {
                let caFile = "\(options.work)/emulator.pem"
                try emulator.certificatePEM.write(toFile: caFile, atomically: true, encoding: .utf8)
                // BenchmarkStack's flags: no rate limit, no reaper pass, no connection closed for idling.
                let serveArguments =
                    [
                        "--database-url", databaseURL, "--master-key-file", masterKeyFile,
                        "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--rate-limit", "1000000000", "--rate-burst", "1000000000",
                        "--reap-interval", "0", "--http-idle-timeout", "86400", "--apns-push-url", "https://localhost:\(emulator.pushPort)",
                        "--apns-management-url", "https://localhost:\(emulator.managementPort)", "--apns-ca-file", caFile,
                    ] + serveFlags
                let stack = GameNightStack(
                    emulator: emulator,
                    client: client,
                    postgres: postgres,
                    databaseURL: databaseURL,
                    options: options,
                    label: label,
                    serveArguments: serveArguments
                )
                try await ensuring {
                    if startsInstances {
                        for instance in 0..<instances { try await stack.start(instance) }
                    }
                    try await body(stack)
                } cleanup: {
                    client.close()
                    await stack.stopServers()
                }
            } cleanup: {
                await emulator.shutdown()
                try? await clientLoops.shutdownGracefully()
            }
        } cleanup: {
            await postgres.stop()
            try? FileManager.default.removeItem(atPath: "\(options.work)/\(label)-postgres.pid")
        }
    }

    /// Kills `instance` (SIGKILL), as a crash would.
    func kill(_ instance: Int) async {
        let serve = self.serves.withLock { serves in
            defer { serves[instance] = nil }
            return serves[instance]
        }
        self.client.setEndpoint(nil, of: instance)
        await serve?.kill()
    }

    /// Starts `instance` (again), on a new port.
    /// - Parameter arguments: `livecast serve` flags beyond the stack's own, such as `--apns-connections`. Defaults
    ///   to none.
    func start(_ instance: Int, arguments: [String] = []) async throws {
        let serve = try await ServeProcess.start(
            self.options.livecast,
            self.serveArguments + arguments,
            work: self.options.work,
            name: "\(self.label)-serve-\(instance)"
        )
        self.serves.withLock { $0[instance] = serve }
        self.client.setEndpoint(GameNightClient.Endpoint(host: serve.host, port: serve.port), of: instance)
    }

    /// Stops `instance` gracefully (SIGTERM), as a deployment would; nothing when it is not running.
    func stop(_ instance: Int) async {
        let serve = self.serves.withLock { serves in
            defer { serves[instance] = nil }
            return serves[instance]
        }
        self.client.setEndpoint(nil, of: instance)
        await serve?.stop()
    }

    /// The peak resident memory of `instance`'s process so far, in bytes; `nil` when it is not running or the system
    /// does not tell.
    func peakResidentBytes(_ instance: Int) -> Int? {
        self.serves.withLock { $0[instance] }?.peakResidentBytes
    }

    /// Runs `livecast ARGUMENTS` to its end, with the database's URL appended. - Returns: its standard output.
    func runCLI(_ arguments: [String]) async throws -> String {
        try await Self.runCLI(self.options, label: self.label, arguments + ["--database-url", self.databaseURL])
    }

    /// Restarts PostgreSQL: a fast shutdown (clients disconnected, connections refused), `down` with the server
    /// stopped, then a start on the same port and data, as `pg_ctl restart -m fast` does.
    func restartPostgres(down: Duration) async throws {
        try await self.postgres.restart { try await Task.sleep(for: down) }
        try Self.writePostgresProcessID(self.postgres, work: self.options.work, label: self.label)
    }

    /// The end of an instance's standard error, for a report.
    func serveErrors(_ instance: Int, lines: Int = 20) -> String {
        let text = (try? String(contentsOfFile: "\(self.options.work)/\(self.label)-serve-\(instance).err", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    private func stopServers() async {
        let serves = self.serves.withLock { serves in
            defer { serves = serves.map { _ in nil } }
            return serves
        }
        await withTaskGroup(of: Void.self) { group in
            for serve in serves.compactMap({ $0 }) { group.addTask { await serve.stop() } }
        }
    }

    /// Migrates the database, adds the app and creates an operator key, with the CLI. - Returns: the key.
    private static func provision(_ options: GameNightOptions, label: String, databaseURL: String, masterKeyFile: String) async throws -> String {
        let parts = options.signingKey.split(separator: ":", maxSplits: 2).map(String.init)
        guard parts.count == 3 else { throw BenchmarkFailure("--signing-key must be TEAMID:KEYID:PATH") }
        let database = ["--database-url", databaseURL]
        _ = try await Self.runCLI(options, label: label, ["migrate"] + database)
        _ = try await Self.runCLI(
            options,
            label: label,
            [
                "apps", "add", "--bundle-id", options.bundleId, "--environment", "sandbox", "--team-id", parts[0], "--key-id", parts[1], "--key-file",
                parts[2],
                "--master-key-file", masterKeyFile,
            ] + database
        )
        let output = try await Self.runCLI(
            options,
            label: label,
            ["keys", "create", "--bundle-id", options.bundleId, "--role", "operator"] + database
        )
        guard let key = output.split(separator: "\n").last.map(String.init), !key.isEmpty else {
            throw BenchmarkFailure("livecast keys create printed no key")
        }
        return key
    }

    /// Runs `livecast ARGUMENTS` to its end. - Returns: its standard output.
    private static func runCLI(_ options: GameNightOptions, label: String, _ arguments: [String]) async throws -> String {
        let output = "\(options.work)/\(label)-cli.out"
        let errors = "\(options.work)/\(label)-cli.err"
        for file in [output, errors] { try? FileManager.default.removeItem(atPath: file) }
        let program = try await BackgroundProgram.start(options.livecast, arguments, standardOutput: output, standardError: errors)
        let status = try await program.waitForExit()
        guard status.isSuccess else {
            let tail = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n").suffix(10).joined(separator: "\n")
            throw BenchmarkFailure("livecast \(arguments.prefix(2).joined(separator: " ")) failed (\(status)):\n\(tail)")
        }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }

    /// `LABEL-postgres.pid`, so scripts/bench.sh can stop the server should this process die first.
    private static func writePostgresProcessID(_ postgres: TemporaryPostgres, work: String, label: String) throws {
        try String(postgres.processID).write(toFile: "\(work)/\(label)-postgres.pid", atomically: true, encoding: .utf8)
    }
}
