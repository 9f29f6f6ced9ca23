import Foundation
import Spawning
import Logging
import LivecastStore
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server for the tests: the one `DATABASE_URL` names, or a throwaway cluster made with `initdb` in a
/// temporary directory and served by `postgres` on a free port, shared by the test process and stopped when it
/// exits.
/// Each suite asks for its own database, so suites run in parallel.
public actor TestPostgres {
    /// The test process's server, started on first use.
    public static let shared = TestPostgres()

    /// The server, once starting began; actor methods re-enter while it starts, so they share this task.
    private var server: Task<PostgresClient.Configuration, any Error>?

    /// A new, empty database on the test server. - Returns: its configuration.
    public func makeDatabase(named prefix: String) async throws -> PostgresClient.Configuration {
        let server = try await self.start()
        let name = "\(prefix.lowercased())_\(UUID().uuidString.prefix(8).lowercased())"
        try await Self.withClient(server) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: #"CREATE DATABASE "\#(name)""#))
        }
        var configuration = server
        configuration.database = name
        return configuration
    }

    /// Runs `body` with a running client for `configuration`.
    public static func withClient<Result: Sendable>(
        _ configuration: PostgresClient.Configuration,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test.postgres", factory: { _ in SwiftLogNoOpLogHandler() }))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    private func start() async throws -> PostgresClient.Configuration {
        if let server { return try await server.value }
        let server = Task {
            if let url = ProcessInfo.processInfo.environment["DATABASE_URL"] {
                return try PostgresClient.Configuration(url: url)
            }
            return try await Self.startCluster()
        }
        self.server = server
        return try await server.value
    }

    /// `initdb` and `postgres` as the `postgres` user when running as root (PostgreSQL refuses root).
    private static func startCluster() async throws -> PostgresClient.Configuration {
        let binaries = try Self.binaryDirectory()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let asRoot = getuid() == 0
        if asRoot {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres", .posixPermissions: 0o700], ofItemAtPath: directory)
        }
        func run(_ tool: String, _ arguments: [String]) async throws {
            let command = asRoot ? ("runuser", ["-u", "postgres", "--", "\(binaries)/\(tool)"] + arguments) : ("\(binaries)/\(tool)", arguments)
            let result = try await ExternalProcess.run(command.0, command.1)
            guard result.status == 0 else { throw TestFailure("\(tool) failed: \(result.stderr)\(result.stdout)") }
        }
        try await run("initdb", ["-D", "\(directory)/data", "-U", "livecast", "-A", "trust", "-E", "UTF8", "--no-sync"])
        let port = try FreePort.next()
        // The server runs as a child left running, spawned so that it inherits no descriptor of this process (see
        // ChildProcess), rather than through pg_ctl, whose daemon would outlive it.
        let server = ["\(binaries)/postgres", "-D", "\(directory)/data", "-p", String(port), "-k", directory,
                      "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
                      "-c", "full_page_writes=off", "-c", "max_connections=300"]
        let command = asRoot ? ["runuser", "-u", "postgres", "--"] + server : server
        let process = try ChildProcess(command[0], Array(command.dropFirst()), stdout: "\(directory)/server.stdout", stderr: "\(directory)/server.stderr")
        runningCluster = (process, "\(directory)/data")
        atexit {
            // Immediate shutdown of the postmaster (SIGQUIT), then the directory goes.
            guard let (_, data) = runningCluster else { return }
            if let pidLine = try? String(contentsOfFile: "\(data)/postmaster.pid", encoding: .utf8).split(separator: "\n").first,
                let pid = Int32(pidLine)
            {
                kill(pid, SIGQUIT)
            }
            try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: data).deletingLastPathComponent().path)
        }
        for _ in 0..<300 {
            let ready = try await ExternalProcess.run("\(binaries)/pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port)])
            if ready.status == 0 {
                return PostgresClient.Configuration(host: "127.0.0.1", port: port, username: "livecast", password: nil, database: "postgres", tls: .disable)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let log = (try? String(contentsOfFile: "\(directory)/server.stderr", encoding: .utf8)) ?? ""
        throw TestFailure("PostgreSQL did not start (exit status \(process.exitStatus.map(String.init) ?? "none yet")): \(log)")
    }

    /// The directory of `initdb` and `postgres`: on `PATH`, or Debian's `/usr/lib/postgresql/<version>/bin`.
    private static func binaryDirectory() throws -> String {
        let initdb = ChildProcess.resolve("initdb")
        if initdb.hasPrefix("/") {
            return URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw TestFailure("no PostgreSQL server binaries (initdb, postgres): install Debian's postgresql package or set DATABASE_URL")
        }
        return "/usr/lib/postgresql/\(newest)/bin"
    }
}

/// The server the process started, kept alive for the process's life and stopped by an `atexit` handler
/// (which can capture nothing).
nonisolated(unsafe) private var runningCluster: (process: ChildProcess, data: String)?
