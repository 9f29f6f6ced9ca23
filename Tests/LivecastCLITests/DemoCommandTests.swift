import Foundation
import LivecastCore
import LivecastTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `livecast demo` end to end: its own PostgreSQL, the emulator and the server, a game through the HTTP API, and
/// nothing left behind.
@Suite(.serialized) struct DemoCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    private var sql: String { CLIDatabase.migrations }

    @Test func theGameEndsOnEveryDeviceWithTheFinalScoreAndTheLateUpdateRefused() async throws {
        let result = try await ExternalProcess.run(self.livecast, ["demo", "--migrations", self.sql])
        #expect(result.status == 0, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains { $0.hasPrefix("✓ late update") && $0.contains("refused: 409 stale_timestamp") }, "\(result.stdout)")
        #expect(lines.contains("✓ start → 6 devices (3 on channel, 3 by token)"), "\(result.stdout)")
        #expect(!lines.contains { $0.hasPrefix("✗") }, "\(result.stdout)")

        let rows = try Self.table(in: lines)
        #expect(rows.count == 6, "\(result.stdout)")
        for row in rows {
            #expect(row["state"] == "ended" && row["content"] == "2-1 90'" && row["dismissal"]?.hasSuffix("UTC") == true, "\(row)")
        }
        #expect(rows.filter { $0["follows"] == "channel" }.map { $0["iOS"] } == ["18.2", "18.2", "18.2"])
        #expect(rows.filter { $0["follows"] == "token" }.map { $0["iOS"] } == ["17.5", "17.5", "17.5"])
        #expect(!FileManager.default.fileExists(atPath: try Self.postgresDirectory(in: lines)), "the temporary PostgreSQL was not removed")
    }

    @Test func keptTheStackAnswersTheCurlExamplesUntilCtrlC() async throws {
        let demo = try await BackgroundProcess(self.livecast, ["demo", "--keep", "--quiet", "--devices", "2", "--migrations", self.sql])
        let deadline = ContinuousClock.now + .seconds(60)
        while !demo.stdout.contains("/emulator/devices"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let lines = demo.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(!lines.contains { $0.hasPrefix("✓ start") }, "quiet prints no steps: \(demo.stdout)")
        let rows = try Self.table(in: lines)
        #expect(rows.count == 2 && rows.allSatisfy { $0["state"] == "ended" }, "\(demo.stdout)")

        let feedExample = try #require(lines.first { $0.hasPrefix("curl -s http://") && $0.contains("/feeds/game-4711") }, "\(demo.stdout)")
        let feed = try await ExternalProcess.run("bash", ["-c", feedExample])
        #expect(feed.stdout.contains(#""state":"ended""#), "\(feed.stdout)")
        let reportExample = try #require(lines.first { $0.hasPrefix("curl -s http://") && $0.contains("/delivery-report") }, "\(demo.stdout)")
        let report = try JSONDecoder().decode(JSONValue.self, from: Data(try await ExternalProcess.run("bash", ["-c", reportExample]).stdout.utf8))
        let pushes = report["days"].items.last?["pushTypes"].items.first { $0["pushType"]?.stringValue == "liveactivity" }
        #expect((pushes?["apple"]?["delivered"]?.intValue ?? 0) > 0, "Apple's side, from the emulator's data export: \(report)")
        let devicesExample = try #require(lines.first { $0.contains("/emulator/devices") })
        let devices = try await ExternalProcess.run("bash", ["-c", devicesExample])
        #expect(devices.stdout.contains("17.5") && devices.stdout.contains("contentState"), "\(devices.stdout) \(devices.stderr)")

        let certificate = try #require(devicesExample.split(separator: " ").first { $0.hasSuffix(".pem") }.map(String.init))
        demo.signal(SIGINT)
        #expect(try await demo.waitForExit(timeout: .seconds(30)) == 0, "stderr: \(demo.stderr)")
        #expect(!FileManager.default.fileExists(atPath: certificate), "the emulator's certificate was not removed")
        let after = try await ExternalProcess.run("bash", ["-c", feedExample])
        #expect(after.status != 0, "the server still answers after Ctrl-C")
    }

    /// The rows of the final table, by column name (columns are two or more spaces apart; values hold single ones).
    private static func table(in lines: [String]) throws -> [[String: String]] {
        let start = try #require(lines.firstIndex { $0.hasPrefix("device ") }, "no table")
        let header = lines[start].split(separator: /[ ]{2,}/).map(String.init)
        return lines[(start + 1)...].prefix { !$0.isEmpty }.map { line in
            Dictionary(uniqueKeysWithValues: zip(header, line.split(separator: /[ ]{2,}/).map(String.init)))
        }
    }

    /// The PostgreSQL directory the `✓ PostgreSQL → … in DIR` line names.
    private static func postgresDirectory(in lines: [String]) throws -> String {
        let line = try #require(lines.first { $0.hasPrefix("✓ PostgreSQL") })
        return try #require(line.components(separatedBy: ", in ").last)
    }
}
