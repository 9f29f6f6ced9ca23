import Foundation
import LocalPostgres
import Subprocess
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Programs started in the background inherit no descriptor of this process and no blocked or ignored signal, and
/// their end is reported.
@Suite struct BackgroundProgramTests {
    @Test func inheritsOnlyTheStandardDescriptorsAndNoSignalMask() async throws {
        // A descriptor this process leaves open across exec.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        #expect(leaked > 2)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("livecast-program-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let program = try await BackgroundProgram.start(
            "bash",
            ["-c", "echo $(ls /proc/self/fd); grep -E '^Sig(Blk|Ign)' /proc/self/status"],
            standardOutput: output
        )
        #expect(try await program.waitForExit() == .exited(0))
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").map { $0.split(whereSeparator: \.isWhitespace) }
        // ls's own descriptors: the three standard ones and the directory it reads, which would be 4 or more had one
        // been inherited.
        #expect(lines.first?.joined(separator: " ") == "0 1 2 3", "\(lines)")
        // Every signal a program can handle, that is all but glibc's own 32 and 33 (which no program can touch).
        let glibcSignals: UInt64 = 1 << (32 - 1) | 1 << (33 - 1)
        let masks = Dictionary(
            uniqueKeysWithValues: lines.dropFirst().compactMap { line in
                line.count == 2 ? (String(line[0]), UInt64(line[1], radix: 16).map { $0 & ~glibcSignals }) : nil
            }
        )
        #expect(masks == ["SigBlk:": 0, "SigIgn:": 0], "\(lines)")
    }

    @Test func aSignalEndsItAndItsEndIsReported() async throws {
        let program = try await BackgroundProgram.start("sleep", ["30"], standardOutput: "/dev/null")
        #expect(program.isRunning)
        #expect(await program.waitForExit(timeout: .milliseconds(100)) == nil)
        program.signal(SIGTERM)
        #expect(await program.waitForExit(timeout: .seconds(10)) == .signaled(SIGTERM))
        #expect(!program.isRunning)
    }
}
