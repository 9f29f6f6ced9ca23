import Foundation
import LocalPostgres

#if canImport(Glibc)
import Glibc
#endif

/// A program left running while a test talks to it (`livecast emulator`, nginx), with its output in files.
package final class BackgroundProcess: Sendable {
    private let program: BackgroundProgram
    private let directory: TemporaryDirectory

    /// Starts `executable` with `arguments`.
    package init(_ executable: String, _ arguments: [String]) async throws {
        self.directory = try TemporaryDirectory()
        self.program = try await BackgroundProgram.start(
            executable,
            arguments,
            standardOutput: self.directory.path("stdout"),
            standardError: self.directory.path("stderr")
        )
    }

    /// What the program wrote to stdout so far.
    package var stdout: String {
        (try? String(contentsOfFile: self.directory.path("stdout"), encoding: .utf8)) ?? ""
    }

    /// What the program wrote to stderr so far.
    package var stderr: String {
        (try? String(contentsOfFile: self.directory.path("stderr"), encoding: .utf8)) ?? ""
    }

    /// Waits until stdout holds `line` as a whole line. - Returns: whether it did before the timeout.
    package func waitForLine(_ line: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if self.stdout.split(separator: "\n").contains(Substring(line)) { return true }
            if !self.program.isRunning { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Sends a signal (SIGTERM by default).
    package func signal(_ signal: Int32 = SIGTERM) {
        self.program.signal(signal)
    }

    /// Waits for the program to exit. - Returns: its exit status (or the signal number when it was killed), or `nil`
    /// if it still runs after the timeout.
    package func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32? {
        await self.program.waitForExit(timeout: timeout)?.code
    }

    deinit {
        self.program.signal(SIGTERM)
    }
}

/// Free loopback ports, for programs that must be told their port: the one helper, shared with the local PostgreSQL.
package typealias FreePort = LocalPostgres.FreePort
