import Foundation
import PostgresNIO
import Spawning

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server: a new cluster made by `initdb` in a temporary directory and served by `postgres`
/// as a child process on a free loopback port, trusting the `livecast` user without a password. PostgreSQL refuses
/// to run as root, so as root both run as the `postgres` user (through `runuser`).
///
/// ``stop()`` shuts the server down and removes the directory; call it on every way out.
///
/// ```swift
/// let postgres = try await TemporaryPostgres.start()
/// let client = PostgresClient(configuration: postgres.configuration)
/// // …
/// await postgres.stop()
/// ```
final class TemporaryPostgres: Sendable {
    /// How to connect: `livecast@127.0.0.1:<port>/postgres`, without TLS.
    let configuration: PostgresClient.Configuration
    /// The server's major version, such as `15`.
    let version: String
    /// The temporary directory: the cluster, its socket and its log.
    let directory: URL
    private let server: ChildProcess
    private let dataDirectory: URL

    private init(configuration: PostgresClient.Configuration, version: String, directory: URL, server: ChildProcess) {
        self.configuration = configuration
        self.version = version
        self.directory = directory
        self.server = server
        self.dataDirectory = directory.appendingPathComponent("data")
    }

    /// The port the server listens on.
    var port: Int { self.configuration.port ?? 5432 }

    /// Makes a cluster and starts the server; it accepts connections when this returns.
    /// - Throws: ``DemoFailure`` when PostgreSQL's programs are missing, or the cluster or the server fails.
    static func start() async throws -> TemporaryPostgres {
        let binaries = try Self.binaryDirectory()
        let owner = try Self.owner()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-demo-\(UUID().uuidString.prefix(8).lowercased())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            if let owner {
                guard chown(directory.path, owner.uid, owner.gid) == 0 else {
                    throw DemoFailure("cannot give \(directory.path) to the postgres user: \(String(cString: strerror(errno)))")
                }
            }
            let data = directory.appendingPathComponent("data")
            let initdb = try await Self.runToExit(
                Self.command("\(binaries)/initdb", ["-D", data.path, "-U", "livecast", "-A", "trust", "-E", "UTF8", "--no-sync"], as: owner),
                log: directory.appendingPathComponent("initdb.log")
            )
            guard initdb == 0 else {
                throw DemoFailure("PostgreSQL's initdb failed: \(Self.tail(of: directory.appendingPathComponent("initdb.log")))")
            }
            let version = (try? String(contentsOf: data.appendingPathComponent("PG_VERSION"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            // A port found free can be taken before the server binds it: try a few.
            var lastLog = ""
            for _ in 0..<3 {
                let port = try Self.freePort()
                let server = try Self.launch(
                    Self.command(
                        "\(binaries)/postgres",
                        ["-D", data.path, "-p", String(port), "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                         "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                        as: owner
                    ),
                    log: directory.appendingPathComponent("postgres.log")
                )
                let postgres = TemporaryPostgres(
                    configuration: PostgresClient.Configuration(host: "127.0.0.1", port: port, username: "livecast", password: nil, database: "postgres", tls: .disable),
                    version: version,
                    directory: directory,
                    server: server
                )
                if try await postgres.waitUntilReady(pgIsReady: "\(binaries)/pg_isready") { return postgres }
                lastLog = Self.tail(of: directory.appendingPathComponent("postgres.log"))
                await postgres.stopServer()
            }
            throw DemoFailure("PostgreSQL did not start: \(lastLog)")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Shuts the server down (a fast shutdown: clients are disconnected) and removes the directory.
    func stop() async {
        await self.stopServer()
        try? FileManager.default.removeItem(at: self.directory)
    }

    /// Waits until `pg_isready` answers, for up to 30 seconds. - Returns: `false` when the server exited or did not
    /// answer in time.
    private func waitUntilReady(pgIsReady: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, self.server.isRunning {
            let ready = try await Self.runToExit(
                (pgIsReady, ["-q", "-h", "127.0.0.1", "-p", String(self.port), "-U", "livecast"]),
                log: self.directory.appendingPathComponent("pg_isready.log")
            )
            if ready == 0 { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Asks the postmaster for a fast shutdown, escalating to an immediate one and then to SIGKILL when it lingers.
    /// Runs to the end even in a cancelled task.
    private func stopServer() async {
        let server = self.server
        let postmasterPID = (try? String(contentsOf: self.dataDirectory.appendingPathComponent("postmaster.pid"), encoding: .utf8))
            .flatMap { $0.split(separator: "\n").first }
            .flatMap { pid_t($0) }
        // Under `runuser` the child process is runuser; the postmaster's own pid is in postmaster.pid.
        let target = postmasterPID ?? server.pid
        await Task {
            for (signal, patience) in [(SIGINT, 10), (SIGQUIT, 5), (SIGKILL, 5)] {
                guard server.isRunning else { return }
                kill(target, signal)
                if signal == SIGKILL { server.signal(SIGKILL) }
                _ = try? await server.waitForExit(timeout: .seconds(patience))
            }
        }.value
    }

    // MARK: Processes

    /// The executable and arguments, wrapped in `runuser -u postgres --` when `owner` is given.
    private static func command(_ executable: String, _ arguments: [String], as owner: (uid: uid_t, gid: gid_t)?) -> (String, [String]) {
        guard owner != nil else { return (executable, arguments) }
        return (Self.runuser, ["-u", "postgres", "--", executable] + arguments)
    }

    /// Starts a program in the background with its output appended to `log`.
    private static func launch(_ command: (String, [String]), log: URL) throws -> ChildProcess {
        do {
            return try ChildProcess(command.0, command.1, stdout: log.path, stderr: log.path, appending: true)
        } catch {
            throw DemoFailure("cannot run \(command.0): \(error)")
        }
    }

    /// Runs a program to its end with its output appended to `log`. - Returns: its exit status.
    private static func runToExit(_ command: (String, [String]), log: URL) async throws -> Int32 {
        try await Self.launch(command, log: log).waitForExit()
    }

    /// The last lines of a log, for an error message.
    private static func tail(of log: URL) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: "\n")
    }

    // MARK: The machine

    /// The directory of `initdb`, `postgres` and `pg_isready`: `initdb`'s on `PATH`, else the newest
    /// `/usr/lib/postgresql/<version>/bin` (Debian keeps them off `PATH`).
    private static func binaryDirectory() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        var candidates = path.split(separator: ":").map(String.init)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        candidates += versions.compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }
        for directory in candidates where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            let resolved = URL(fileURLWithPath: "\(directory)/initdb").resolvingSymlinksInPath().deletingLastPathComponent().path
            for tool in ["postgres", "pg_isready"] where !FileManager.default.isExecutableFile(atPath: "\(resolved)/\(tool)") {
                throw DemoFailure("PostgreSQL's \(tool) was not found next to \(resolved)/initdb: install postgresql")
            }
            return resolved
        }
        throw DemoFailure(
            "PostgreSQL's initdb was not found on PATH or in /usr/lib/postgresql/*/bin: install postgresql (Debian: apt-get install postgresql)"
        )
    }

    /// The `postgres` user when running as root (PostgreSQL refuses root), else `nil`: the cluster is the caller's.
    private static func owner() throws -> (uid: uid_t, gid: gid_t)? {
        guard getuid() == 0 else { return nil }
        guard let user = getpwnam("postgres") else {
            throw DemoFailure("PostgreSQL refuses to run as root and there is no postgres user to run it as: run as another user, or install postgresql")
        }
        guard FileManager.default.isExecutableFile(atPath: Self.runuser) else {
            throw DemoFailure("running PostgreSQL as the postgres user needs runuser (util-linux): install util-linux")
        }
        return (user.pointee.pw_uid, user.pointee.pw_gid)
    }

    private static let runuser = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/runuser"

    /// A loopback TCP port nothing listens on right now.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw DemoFailure("cannot find a free port: socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let found = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard found else { throw DemoFailure("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
