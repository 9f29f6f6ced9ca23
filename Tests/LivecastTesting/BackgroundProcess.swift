import Foundation
import Spawning

#if canImport(Glibc)
import Glibc
#endif

/// A program left running while a test talks to it (`livecast emulator`), with its output in files.
public final class BackgroundProcess: Sendable {
    private let child: ChildProcess
    private let directory: TemporaryDirectory

    /// Starts `executable` with `arguments`.
    public init(_ executable: String, _ arguments: [String]) throws {
        self.directory = try TemporaryDirectory()
        self.child = try ChildProcess(executable, arguments, stdout: self.directory.path("stdout"), stderr: self.directory.path("stderr"))
    }

    /// What the program wrote to stdout so far.
    public var stdout: String {
        (try? String(contentsOfFile: self.directory.path("stdout"), encoding: .utf8)) ?? ""
    }

    /// What the program wrote to stderr so far.
    public var stderr: String {
        (try? String(contentsOfFile: self.directory.path("stderr"), encoding: .utf8)) ?? ""
    }

    /// Waits until stdout holds `line` as a whole line. - Returns: whether it did before the timeout.
    public func waitForLine(_ line: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if self.stdout.split(separator: "\n").contains(Substring(line)) { return true }
            if !self.child.isRunning { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Sends a signal (SIGTERM by default).
    public func signal(_ signal: Int32 = SIGTERM) {
        self.child.signal(signal)
    }

    /// Waits for the program to exit. - Returns: its exit status, or `nil` if it still runs after the timeout.
    public func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32? {
        try await self.child.waitForExit(timeout: timeout)
    }

    deinit {
        self.child.signal(SIGTERM)
    }
}

/// Free TCP ports on the loopback interface, for programs that must be told their port.
public enum FreePort {
    /// A port nothing listens on right now.
    public static func next() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw TestFailure("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw TestFailure("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
