import Foundation

/// Runs another program (curl, openssl, nghttp, the `livecast` binary) to completion without blocking a thread,
/// capturing its output in files so large outputs cannot stall it.
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
        let stdoutURL = directory.url.appendingPathComponent("stdout")
        let stderrURL = directory.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.resolve(executable))
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        if let stdin {
            let stdinURL = directory.url.appendingPathComponent("stdin")
            try stdin.write(to: stdinURL, atomically: false, encoding: .utf8)
            process.standardInput = try FileHandle(forReadingFrom: stdinURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return Result(
            status: status,
            stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        )
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
