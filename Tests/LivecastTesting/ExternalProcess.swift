import Foundation
import Spawning

/// Runs another program (curl, openssl, nghttp, the `livecast` binary) to completion without blocking a thread,
/// capturing its output in files so large outputs cannot stall it (see ``ChildProcess``).
public enum ExternalProcess {
    /// What a finished program left behind.
    public struct Result: Sendable {
        /// The exit status (or the signal number when it was killed).
        public var status: Int32
        /// Everything it wrote to stdout.
        public var stdout: String
        /// Everything it wrote to stderr.
        public var stderr: String
    }

    /// Runs `executable` with `arguments` and waits for it to exit.
    /// - Parameters:
    ///   - executable: A path, or a name looked up in `PATH`.
    ///   - arguments: The arguments.
    ///   - stdin: Text to feed on standard input. Defaults to none.
    public static func run(_ executable: String, _ arguments: [String], stdin: String? = nil) async throws -> Result {
        let directory = try TemporaryDirectory()
        var stdinPath: String?
        if let stdin {
            let path = directory.path("stdin")
            try stdin.write(toFile: path, atomically: false, encoding: .utf8)
            stdinPath = path
        }
        let child = try ChildProcess(executable, arguments, stdin: stdinPath, stdout: directory.path("stdout"), stderr: directory.path("stderr"))
        let status = try await child.waitForExit()
        return Result(
            status: status,
            stdout: (try? String(contentsOfFile: directory.path("stdout"), encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: directory.path("stderr"), encoding: .utf8)) ?? ""
        )
    }
}

/// A directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    public init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func path(_ name: String) -> String {
        self.url.appendingPathComponent(name).path
    }

    deinit {
        try? FileManager.default.removeItem(at: self.url)
    }
}
