import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A program Livecast starts (the demo's PostgreSQL; curl, openssl and the `livecast` binary in the tests), spawned
/// with `posix_spawn` rather than Foundation's `Process`, with its standard streams on files.
///
/// Foundation's `Process.run()` on Linux can crash the calling process: it reads `/proc/self/fd` with a 256-byte
/// copy of each directory entry, past the end of glibc's buffer when an entry sits at its tail
/// (swift-corelibs-foundation #5472, in Swift 6.3.1; it crashed two runs of the test suite out of two when they ran
/// side by side). It also lets a long-lived child inherit descriptors of other children, so that it never sees them
/// end. So the program is started through a shell that closes every inherited descriptor above 2 and then execs it.
public final class ChildProcess: Sendable {
    /// The process id.
    public let pid: pid_t
    /// The raw `waitpid` status, once the process has been reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Why a program could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`.
    /// - Parameters:
    ///   - stdin: A file to read standard input from; `/dev/null` when `nil`.
    ///   - stdout: The file standard output goes to, created if missing.
    ///   - stderr: The file standard error goes to, created if missing (it may be `stdout`'s).
    ///   - appending: Whether output is added to the files' ends rather than replacing them.
    /// - Throws: ``SpawnError`` when the shell that starts it cannot be spawned.
    public init(_ executable: String, _ arguments: [String], stdin: String? = nil, stdout: String, stderr: String, appending: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let outputFlags = O_WRONLY | O_CREAT | (appending ? O_APPEND : O_TRUNC)
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, outputFlags, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, outputFlags, 0o644)
        let closeInherited = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$@""#
        let program = ChildProcess.resolve(executable)
        let argv: [UnsafeMutablePointer<CChar>?] = (["/bin/bash", "-c", closeInherited, "bash", program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        // No signal blocked or ignored, whatever the spawning thread's mask: the tests stop programs with signals.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/bash", &actions, &attributes, argv, environ)
        guard status == 0 else { throw SpawnError(description: "cannot start \(program): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    /// How it ended: its exit status, or the number of the signal that killed it; `nil` while it runs.
    public var exitStatus: Int32? {
        self.reaped.withLock { reaped in
            if reaped == nil {
                var status: Int32 = 0
                if waitpid(self.pid, &status, WNOHANG) == self.pid { reaped = status }
            }
            return reaped.map { $0 & 0x7f == 0 ? ($0 >> 8) & 0xff : $0 & 0x7f }
        }
    }

    /// Whether it still runs.
    public var isRunning: Bool { self.exitStatus == nil }

    /// Waits for it to end, without holding a thread. - Returns: ``exitStatus``.
    public func waitForExit() async throws -> Int32 {
        while true {
            if let status = try await self.waitForExit(until: nil) { return status }
        }
    }

    /// Waits for it to end, at most `timeout`. - Returns: ``exitStatus``; `nil` if it still runs after the timeout.
    public func waitForExit(timeout: Duration) async throws -> Int32? {
        try await self.waitForExit(until: ContinuousClock.now + timeout)
    }

    /// Polls ``exitStatus``, more slowly as time passes (every 20 ms at most), until it ends or the deadline.
    private func waitForExit(until deadline: ContinuousClock.Instant?) async throws -> Int32? {
        var interval = Duration.milliseconds(1)
        while deadline.map({ ContinuousClock.now < $0 }) ?? true {
            if let status = self.exitStatus { return status }
            try await Task.sleep(for: interval)
            interval = min(interval * 2, .milliseconds(20))
        }
        return self.exitStatus
    }

    /// Sends it a signal (SIGTERM by default), unless it has ended.
    public func signal(_ signal: Int32 = SIGTERM) {
        if self.isRunning { kill(self.pid, signal) }
    }

    /// Finds a program in `PATH`, or returns the name unchanged when it is a path.
    public static func resolve(_ executable: String) -> String {
        guard !executable.contains("/") else { return executable }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return executable
    }
}
