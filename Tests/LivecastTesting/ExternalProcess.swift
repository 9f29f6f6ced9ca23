import Subprocess
import SystemPackage

/// Runs another program (curl, openssl, nghttp, the `livecast` binary) to completion with swift-subprocess, without
/// holding a thread, collecting all its output.
package enum ExternalProcess {
    /// What a finished program left behind.
    package struct Result: Sendable {
        /// The exit status (or the signal number when it was killed).
        package var status: Int32
        /// Everything it wrote to stdout.
        package var stdout: String
        /// Everything it wrote to stderr.
        package var stderr: String
    }

    /// Runs `executable` with `arguments` and waits for it to exit.
    /// - Parameters:
    ///   - executable: A path, or a name looked up in `PATH`.
    ///   - arguments: The arguments.
    ///   - stdin: Text to feed on standard input. Defaults to none.
    package static func run(_ executable: String, _ arguments: [String], stdin: String? = nil) async throws -> Result {
        let program: Executable = executable.contains("/") ? .path(FilePath(executable)) : .name(executable)
        let result =
            if let stdin {
                try await Subprocess.run(
                    program,
                    arguments: Arguments(arguments),
                    input: .string(stdin),
                    output: .string(limit: .max),
                    error: .string(limit: .max)
                )
            } else {
                try await Subprocess.run(program, arguments: Arguments(arguments), output: .string(limit: .max), error: .string(limit: .max))
            }
        return Result(status: result.terminationStatus.code, stdout: result.standardOutput, stderr: result.standardError)
    }
}

extension TerminationStatus {
    /// The exit status, or the number of the signal that ended it.
    package var code: Int32 {
        switch self {
        case .exited(let status), .signaled(let status): status
        }
    }
}
