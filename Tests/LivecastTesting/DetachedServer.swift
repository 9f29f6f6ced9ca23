import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A long-lived server process for the whole test run (PostgreSQL), spawned with no descriptor of the test process
/// but its log files.
///
/// Foundation's `Process` leaves descriptors open across its spawns: a server started by it while another test's
/// short-lived process runs inherits that process's descriptors, and Foundation then never sees the short process
/// end, so its test waits forever. This spawns it with `posix_spawn` through a shell that closes every inherited
/// descriptor above 2 before it execs the server.
public struct DetachedServer: Sendable {
    /// The process id.
    public let pid: pid_t
    /// Where its standard error goes.
    public let stderrPath: String

    /// Starts `executable` with `arguments` (an absolute path; standard output and error to files beside `logPrefix`).
    public init(_ executable: String, _ arguments: [String], logPrefix: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "\(logPrefix).stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "\(logPrefix).stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let closeInherited = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec "$@""#
        let argv: [UnsafeMutablePointer<CChar>?] = (["/bin/bash", "-c", closeInherited, "bash", executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
        guard status == 0 else { throw TestFailure("cannot start \(executable): \(String(cString: strerror(status)))") }
        self.pid = pid
        self.stderrPath = "\(logPrefix).stderr"
    }

    /// What it wrote to standard error so far.
    public var stderr: String {
        (try? String(contentsOfFile: self.stderrPath, encoding: .utf8)) ?? ""
    }
}
