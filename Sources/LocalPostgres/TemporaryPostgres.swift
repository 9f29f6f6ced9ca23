package import Foundation
package import PostgresNIO
package import Subprocess
import Synchronization

#if canImport(Glibc)
import Glibc
import SystemPackage
#endif

/// A throwaway PostgreSQL server: a new cluster made by `initdb` in a temporary directory and served by `postgres`
/// as a child process on a free loopback port, trusting the `livecast` user without a password. PostgreSQL refuses
/// to run as root, so as root both run as the `postgres` user. The demo, the tests and the fan-out benchmark use it.
///
/// ``stop()`` shuts the server down and removes the directory; call it on every way out, or, for a server that
/// lasts as long as the process, call ``stopWhenProcessExits()`` once.
///
/// ```swift
/// let postgres = try await TemporaryPostgres.start()
/// let client = PostgresClient(configuration: postgres.configuration)
/// // …
/// await postgres.stop()
/// ```
package final class TemporaryPostgres: Sendable {
    /// How to connect: `livecast@127.0.0.1:<port>/postgres`, without TLS.
    package let configuration: PostgresClient.Configuration
    /// The server's major version, such as `15`.
    package let version: String
    /// The temporary directory: the cluster (`data/`), the server's socket and the logs.
    package let directory: URL
    /// The running server; replaced by ``restart(whileDown:)``.
    private let running: Mutex<BackgroundProgram>
    /// How the server was started: the program, its arguments and the installation's user.
    private let launch: Launch

    private struct Launch: Sendable {
        let installation: PostgresInstallation
        let arguments: [String]
    }

    /// Why PostgreSQL could not be started: a missing program, or a cluster or server that failed. The message says
    /// what to do, or shows the end of PostgreSQL's log.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    private init(configuration: PostgresClient.Configuration, version: String, directory: URL, server: BackgroundProgram, launch: Launch) {
        self.configuration = configuration
        self.version = version
        self.directory = directory
        self.running = Mutex(server)
        self.launch = launch
    }

    private var server: BackgroundProgram { self.running.withLock { $0 } }

    /// The port the server listens on.
    package var port: Int { self.configuration.port ?? 5432 }

    /// The server's process id (the postmaster's).
    package var processID: pid_t { self.server.processID }

    /// Makes a cluster and starts the server; it accepts connections when this returns.
    /// - Parameter settings: Server settings beyond the defaults (`listen_addresses=127.0.0.1`, and `fsync`,
    ///   `synchronous_commit` and `full_page_writes` off: the data is thrown away), such as `max_connections`.
    /// - Throws: ``Failure`` when PostgreSQL's programs are missing, or the cluster or the server fails.
    package static func start(settings: [String: String] = [:]) async throws -> TemporaryPostgres {
        let installation = try PostgresInstallation.find()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-postgres-\(UUID().uuidString.prefix(8).lowercased())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            if let owner = installation.owner, chown(directory.path, owner.uid, owner.gid) != 0 {
                throw Failure("cannot give \(directory.path) to the postgres user: \(String(cString: strerror(errno)))")
            }
            let data = directory.appendingPathComponent("data")
            try await Self.makeCluster(in: data, installation: installation, log: directory.appendingPathComponent("initdb.log"))
            let version =
                (try? String(contentsOf: data.appendingPathComponent("PG_VERSION"), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            let defaults = ["listen_addresses": "127.0.0.1", "fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"]
            let serverSettings = defaults.merging(settings) { $1 }.sorted { $0.key < $1.key }.flatMap { ["-c", "\($0.key)=\($0.value)"] }
            let log = directory.appendingPathComponent("postgres.log")
            // A port found free can be taken before the server binds it: try a few.
            for _ in 0..<3 {
                let port = try FreePort.next()
                let launch = Launch(
                    installation: installation,
                    arguments: ["-D", data.path, "-p", String(port), "-k", directory.path] + serverSettings
                )
                let server = try await Self.launch(
                    installation.program("postgres"),
                    launch.arguments,
                    installation: installation,
                    in: directory,
                    log: log
                )
                let postgres = TemporaryPostgres(
                    configuration: PostgresClient.Configuration(
                        host: "127.0.0.1",
                        port: port,
                        username: "livecast",
                        password: nil,
                        database: "postgres",
                        tls: .disable
                    ),
                    version: version,
                    directory: directory,
                    server: server,
                    launch: launch
                )
                let ready: Bool
                do {
                    ready = try await postgres.waitUntilReady(pgIsReady: installation.program("pg_isready"))
                } catch {
                    await postgres.stopServer()
                    throw error
                }
                if ready { return postgres }
                await postgres.stopServer()
            }
            throw Failure("PostgreSQL did not start: \(Self.tail(of: log))")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// An outage, for tests: shuts the server down (a fast shutdown: clients are disconnected and connections are
    /// refused), runs `whileDown`, then starts it again on the same port and data and waits until it accepts
    /// connections. The server is started again even when `whileDown` throws.
    /// - Throws: What `whileDown` throws, or ``Failure`` when the server does not start again.
    package func restart<Result: Sendable>(whileDown: () async throws -> Result) async throws -> Result {
        await self.stopServer()
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await whileDown())
        } catch {
            result = .failure(error)
        }
        let log = self.directory.appendingPathComponent("postgres.log")
        let server = try await Self.launch(
            self.launch.installation.program("postgres"),
            self.launch.arguments,
            installation: self.launch.installation,
            in: self.directory,
            log: log
        )
        self.running.withLock { $0 = server }
        guard try await self.waitUntilReady(pgIsReady: self.launch.installation.program("pg_isready")) else {
            throw Failure("PostgreSQL did not start again: \(Self.tail(of: log))")
        }
        return try result.get()
    }

    /// Shuts the server down (a fast shutdown: clients are disconnected) and removes the directory. Runs to the end
    /// even in a cancelled task.
    package func stop() async {
        await self.stopServer()
        try? FileManager.default.removeItem(at: self.directory)
    }

    /// Stops the server (an immediate shutdown) and removes the directory when this process exits: for a server
    /// that serves the whole process, as in the tests.
    package func stopWhenProcessExits() {
        serversToStopAtExit.withLock { servers in
            if servers.isEmpty {
                atexit {
                    for server in serversToStopAtExit.withLock({ $0 }) {
                        TemporaryPostgres.stopImmediately(processID: server.processID, directory: server.directory)
                    }
                }
            }
            servers.append((self.processID, self.directory))
        }
    }

    /// An immediate shutdown (SIGQUIT) that blocks the thread, for an `atexit` handler: waits up to 5 seconds for the
    /// server to remove its lock file, its last act, then kills it if it has not. The directory is removed by an
    /// `rm -rf` left running after this process: a test suite's cluster holds tens of thousands of files, whose removal would
    /// otherwise hold the exiting process for a minute or more.
    private static func stopImmediately(processID: pid_t, directory: URL) {
        kill(processID, SIGQUIT)
        let lockFile = directory.appendingPathComponent("data/postmaster.pid").path
        for _ in 0..<500 where FileManager.default.fileExists(atPath: lockFile) {
            usleep(10_000)
        }
        if FileManager.default.fileExists(atPath: lockFile) { kill(processID, SIGKILL) }
        Self.removeInBackground(directory.path)
    }

    /// Starts `rm -rf path` with no descriptor of this process, and does not wait for it.
    private static func removeInBackground(_ path: String) {
        // A pipe kept open by rm would hold whoever reads this exiting process's output until rm is done.
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in descriptors.compactMap(Int32.init) where descriptor > 2 {
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0) }
        var processID = pid_t()
        let words: [String] = ["rm", "-rf", path]
        var arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        if posix_spawnp(&processID, "rm", &actions, nil, &arguments, environ) != 0 {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// Waits until `pg_isready` answers, for up to 30 seconds. - Returns: `false` when the server exited or did not
    /// answer in time.
    private func waitUntilReady(pgIsReady: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline, self.server.isRunning {
            let ready = try await Subprocess.run(
                .path(.init(pgIsReady)),
                arguments: ["-q", "-h", "127.0.0.1", "-p", String(self.port), "-U", "livecast"],
                output: .discarded,
                error: .discarded
            )
            if ready.terminationStatus.isSuccess { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Asks the postmaster for a fast shutdown (SIGINT), escalating to an immediate one (SIGQUIT) and then to
    /// SIGKILL when it lingers. Runs to the end even in a cancelled task.
    private func stopServer() async {
        let server = self.server
        await Task {
            for (signal, patience) in [(SIGINT, 10), (SIGQUIT, 5), (SIGKILL, 5)] {
                server.signal(signal)
                if await server.waitForExit(timeout: .seconds(patience)) != nil { return }
            }
        }.value
    }

    // MARK: Processes

    /// Runs `initdb` for a cluster owned by the `livecast` user, trusted without a password.
    private static func makeCluster(in data: URL, installation: PostgresInstallation, log: URL) async throws {
        let initdb = try await Self.launch(
            installation.program("initdb"),
            ["-D", data.path, "-U", "livecast", "-A", "trust", "-E", "UTF8", "--no-sync"],
            installation: installation,
            in: data.deletingLastPathComponent(),
            log: log
        )
        guard try await initdb.waitForExit().isSuccess else {
            throw Failure("PostgreSQL's initdb failed: \(Self.tail(of: log))")
        }
    }

    /// Starts one of PostgreSQL's programs as the installation's user, in `directory`, with its output appended to
    /// `log`.
    private static func launch(
        _ program: String,
        _ arguments: [String],
        installation: PostgresInstallation,
        in directory: URL,
        log: URL
    ) async throws -> BackgroundProgram {
        let (executable, arguments) = installation.command(program, arguments)
        do {
            return try await BackgroundProgram.start(executable, arguments, standardOutput: log.path, workingDirectory: directory.path)
        } catch {
            throw Failure("cannot run \(program): \(error)")
        }
    }

    /// The last lines of a log, for an error message.
    private static func tail(of log: URL) -> String {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: "\n")
    }
}

/// The servers ``TemporaryPostgres/stopWhenProcessExits()`` stops at exit (an `atexit` handler captures nothing).
private let serversToStopAtExit = Mutex<[(processID: pid_t, directory: URL)]>([])
