import Foundation
import LocalPostgres

#if canImport(Glibc)
import Glibc
#endif

/// `livecast serve`, started for one run with its output in the work directory and its process id in
/// `serve.pid` (so scripts/bench.sh can stop it should this process die first); another name than `serve` keeps the
/// files of several servers apart.
struct ServeProcess: Sendable {
    /// The address the API listens on.
    let host: String
    let port: Int
    private let program: BackgroundProgram
    private let pidFile: String

    /// Starts `livecast serve ARGUMENTS` and waits (up to a minute) until it prints `listening on HOST:PORT`.
    /// - Parameter name: The files' name in `work`: `NAME.out`, `NAME.err` (appended to) and `NAME.pid`. Defaults to
    ///   `serve`.
    /// - Throws: ``BenchmarkFailure`` with the end of its standard error when it exits or does not listen in time.
    static func start(_ livecast: String, _ arguments: [String], work: String, name: String = "serve") async throws -> ServeProcess {
        let output = "\(work)/\(name).out"
        let errors = "\(work)/\(name).err"
        try? FileManager.default.removeItem(atPath: output)
        let program = try await BackgroundProgram.start(livecast, ["serve"] + arguments, standardOutput: output, standardError: errors)
        let pidFile = "\(work)/\(name).pid"
        try String(program.processID).write(toFile: pidFile, atomically: true, encoding: .utf8)
        for _ in 0..<1_200 {
            let lines = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n")
            if let line = lines.first(where: { $0.hasPrefix("listening on ") }), let colon = line.lastIndex(of: ":"),
                let port = Int(line[line.index(after: colon)...])
            {
                let host = String(line.dropFirst("listening on ".count)[..<colon])
                return ServeProcess(host: host, port: port, program: program, pidFile: pidFile)
            }
            guard program.isRunning else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        await Self.stop(program, pidFile: pidFile)
        let tail = ((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "").split(separator: "\n").suffix(20).joined(separator: "\n")
        throw BenchmarkFailure("livecast serve did not start listening:\n\(tail)")
    }

    /// Kills the server as a crash would (SIGKILL: no shutdown, its leases and connections left as they were) and
    /// waits until it has exited.
    func kill() async {
        self.program.signal(SIGKILL)
        _ = try? await self.program.waitForExit()
        try? FileManager.default.removeItem(atPath: self.pidFile)
    }

    /// The server's peak resident memory so far (`VmHWM` in `/proc/PID/status`), in bytes; `nil` when the system
    /// does not tell (not Linux, or the process has gone).
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(self.program.processID)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1_024
    }

    /// Stops the server: SIGTERM, then SIGKILL if it still runs after 30 s.
    func stop() async {
        await Self.stop(self.program, pidFile: self.pidFile)
    }

    private static func stop(_ program: BackgroundProgram, pidFile: String) async {
        program.signal(SIGTERM)
        if await program.waitForExit(timeout: .seconds(30)) == nil {
            program.signal(SIGKILL)
            _ = try? await program.waitForExit()
        }
        try? FileManager.default.removeItem(atPath: pidFile)
    }
}
