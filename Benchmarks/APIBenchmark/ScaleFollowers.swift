import Foundation
import LocalPostgres
import NIOHTTP1
import Subprocess

/// The scale benchmark's feeds and their token followers: one feed per run, `scale-RUN`, each with its own followers
/// `scale-RUN-INDEX`, so that every run fans out to followers no push has reached yet. They are made before the first
/// run: the feeds through the API, the followers with `livecast tokens import` (the CLI's bulk path, straight into the
/// database), then `ANALYZE`, so that every run finds the same tables with fresh statistics.
struct ScaleFollowers: Sendable {
    let stack: GameNightStack
    /// The app's bundle id, for the import.
    let bundleId: String
    /// Followers per feed.
    let count: Int

    /// Rows written to the import file at a time.
    private static let chunk = 10_000

    /// The feed of run `run`.
    static func feedKey(_ run: Int) -> String {
        "scale-\(run)"
    }

    /// Follower `index`'s update token in run `run`: `5ca1e`, the run in 3 hex digits and the index in 56.
    static func token(run: Int, index: Int) -> String {
        Self.tokenPrefix(run: run) + Self.hex(index, digits: 56)
    }

    /// Which follower of run `run` a wire target (`device:TOKEN`) is. - Returns: its index, or `nil` for any other
    /// target.
    static func index(ofTarget target: String, run: Int) -> Int? {
        let prefix = "device:" + Self.tokenPrefix(run: run)
        guard target.hasPrefix(prefix) else { return nil }
        return Int(target.dropFirst(prefix.count), radix: 16)
    }

    /// The wire targets of run `run`'s followers.
    func targets(run: Int) -> Set<String> {
        Set((0..<self.count).map { "device:" + Self.token(run: run, index: $0) })
    }

    /// Makes the feeds of runs `0..<runs` and their followers. Starts instance 0 for the API calls and stops it after.
    /// - Throws: ``BenchmarkFailure`` when a feed is refused or the import or `ANALYZE` fails.
    func seed(runs: Int, work: String) async throws {
        try await self.stack.start(0)
        try await ensuring {
            for run in 0..<runs { try await self.createFeed(run) }
        } cleanup: {
            await self.stack.stop(0)
        }
        let file = "\(work)/scale-followers.ndjson"
        for run in 0..<runs {
            try self.writeRows(run: run, to: file)
            let started = ContinuousClock.now
            let output = try await self.stack.runCLI(["tokens", "import", file, "--kind", "activities", "--bundle-id", self.bundleId])
            try? FileManager.default.removeItem(atPath: file)
            ScaleCommand.note(
                "run \(run): \(self.count) followers imported in \(String(format: "%.1f", (ContinuousClock.now - started).inSeconds)) s "
                    + "(\(output.split(separator: "\n").last ?? ""))"
            )
        }
        try await self.analyze(work: work)
    }

    /// `PUT …/feeds/scale-RUN`, with no channel: its followers are reached by token only.
    private func createFeed(_ run: Int) async throws {
        let request = APIRequest(
            .PUT,
            "\(self.stack.appPath)/feeds/\(Self.feedKey(run))",
            json: #"{"attributesType":"\#(BenchmarkStack.attributesType)","attributes":{"home":"Giants","away":"Mets"}}"#
        )
        let answer = await self.stack.client.call(request, on: 0)
        guard answer.isSuccess else { throw BenchmarkFailure("creating feed \(Self.feedKey(run)) answered \(answer.description)") }
    }

    /// Writes run `run`'s followers to `file` as NDJSON import rows, a chunk at a time.
    private func writeRows(run: Int, to file: String) throws {
        guard FileManager.default.createFile(atPath: file, contents: nil) else { throw BenchmarkFailure("cannot create \(file)") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        let feed = Self.feedKey(run)
        for first in stride(from: 0, to: self.count, by: Self.chunk) {
            var text = ""
            for index in first..<min(first + Self.chunk, self.count) {
                text += #"{"activityId":"\#(feed)-\#(index)","attributesType":"\#(BenchmarkStack.attributesType)","#
                text += #""pushToken":"\#(Self.token(run: run, index: index))","feed":"\#(feed)"}"# + "\n"
            }
            try handle.write(contentsOf: Data(text.utf8))
        }
    }

    /// `ANALYZE` through psql: the tables have just grown by every run's followers, and the statistics autovacuum would
    /// gather a minute later are needed now, so that the planner does not take them for empty.
    private func analyze(work: String) async throws {
        let errors = "\(work)/scale-psql.err"
        let program = try await BackgroundProgram.start(
            "psql",
            ["-q", "-X", self.stack.databaseURL, "-c", "ANALYZE"],
            standardOutput: "\(work)/scale-psql.out",
            standardError: errors
        )
        guard try await program.waitForExit().isSuccess else {
            throw BenchmarkFailure("psql ANALYZE failed: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        }
    }

    private static func tokenPrefix(run: Int) -> String {
        "5ca1e" + Self.hex(run, digits: 3)
    }

    private static func hex(_ value: Int, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
