import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL's server programs on this machine (`initdb`, `postgres`, `pg_isready`), and the user they run as:
/// the caller, or the `postgres` user when the caller is root (PostgreSQL refuses to run as root).
struct PostgresInstallation: Sendable {
    /// The directory of the programs.
    let binaries: String
    /// The `postgres` user's ids when running as root, else `nil`.
    let owner: (uid: uid_t, gid: gid_t)?

    /// Finds the programs and the user.
    /// - Throws: ``TemporaryPostgres/Failure`` when a program is missing, or as root when there is no `postgres` user.
    static func find() throws -> PostgresInstallation {
        PostgresInstallation(binaries: try Self.binaryDirectory(), owner: try Self.owner())
    }

    /// The path of one of the programs.
    func program(_ name: String) -> String {
        "\(self.binaries)/\(name)"
    }

    /// The command line that runs `program` as the `postgres` user, with its group only, when the caller is root:
    /// util-linux's `setpriv` switches user and groups, then executes the program in its place. (swift-subprocess
    /// can switch them itself, but only by `fork`ing this multithreaded process and calling `setgroups` and friends
    /// before `exec`; a child was seen to hang there on a lock another thread held. Without a user to switch to, it
    /// uses `posix_spawn`.)
    func command(_ program: String, _ arguments: [String]) -> (executable: String, arguments: [String]) {
        guard let owner = self.owner else { return (program, arguments) }
        return ("setpriv", ["--reuid=\(owner.uid)", "--regid=\(owner.gid)", "--clear-groups", "--", program] + arguments)
    }

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
                throw TemporaryPostgres.Failure("PostgreSQL's \(tool) was not found next to \(resolved)/initdb: install postgresql")
            }
            return resolved
        }
        throw TemporaryPostgres.Failure(
            "PostgreSQL's initdb was not found on PATH or in /usr/lib/postgresql/*/bin: install postgresql (Debian: apt-get install postgresql)"
        )
    }

    /// The `postgres` user when running as root, else `nil`: the cluster is the caller's.
    private static func owner() throws -> (uid: uid_t, gid: gid_t)? {
        guard getuid() == 0 else { return nil }
        guard let user = getpwnam("postgres") else {
            throw TemporaryPostgres.Failure(
                "PostgreSQL refuses to run as root and there is no postgres user to run it as: run as another user, or install postgresql"
            )
        }
        return (user.pointee.pw_uid, user.pointee.pw_gid)
    }
}
