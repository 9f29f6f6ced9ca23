import APNsEmulator
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `scale`: how one feed update's fan-out to many token followers speeds up with more `livecast serve` instances on
/// one database (issue #53), judged at the wire.
struct ScaleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Fan one feed update out to N stored token followers through 1, 2, 3… instances and time it to the wire.",
        discussion: """
            Starts a throwaway PostgreSQL (provisioned with the CLI, as `gamenight` does) and the APNs emulator in \
            this process, answering after --latency-ms, advertising --streams streams per connection, answering 200 \
            to unknown tokens and recording the wire. Makes one feed per run, each with --followers token followers \
            of its own (the feeds through the API, the followers with `livecast tokens import`, then ANALYZE with the \
            psql on PATH). Then, for each count in --instances, and for one instance with each of \
            --compare-connections, starts that many `livecast serve` on the database (--apns-connections each; \
            --fan-out-slice SLICE when given), posts its feed's update, waits until every follower has accepted it and the wire has been quiet for 2 s \
            (at most --timeout), reads each instance's peak resident memory (VmHWM), and stops them. Prints a table: \
            seconds from the 202 to the last follower's push on the wire, pushes a second, their ratio to the run of \
            one instance with --connections, the peaks in MiB per instance, followers lost (never reached), and \
            violations: duplicates (a follower's update again), out-of-order pushes (WireJudge) and any other push. \
            Exits 1 after printing when a follower was lost or any violation was seen.
            """
    )

    @OptionGroup var stack: GameNightOptions

    @Option(help: "Token followers of each run's feed.")
    var followers = 1_000_000

    @Option(help: "The instance counts to run, comma-separated, each with --connections APNs connections.")
    var instances = ScaleCounts([1, 2, 3])

    @Option(help: "HTTP/2 connections to APNs per instance in the --instances runs (serve's --apns-connections).")
    var connections = 2

    @Option(help: "Connection counts to run on one instance as well, comma-separated, or none.")
    var compareConnections = ScaleCounts([6])

    @Option(help: "Milliseconds the emulator waits before each answer.")
    var latencyMs = 40

    @Option(help: "MAX_CONCURRENT_STREAMS the emulator advertises per connection.")
    var streams = 100

    @Option(help: "Followers per fan-out slice, for every instance (serve's --fan-out-slice); the server's default when absent.")
    var slice: Int?

    @Option(help: "Seconds to wait, after an update's 202, for its last push.")
    var timeout = 900.0

    /// The runs, in order: the instance counts, then the connection counts on one instance.
    var shapes: [ScaleShape] {
        self.instances.values.map { ScaleShape(instances: $0, connections: self.connections) }
            + self.compareConnections.values.map { ScaleShape(instances: 1, connections: $0) }
    }

    func validate() throws {
        guard self.followers > 0 else { throw ValidationError("--followers must be positive") }
        guard !self.instances.values.isEmpty else { throw ValidationError("--instances needs at least one count") }
        guard (self.compareConnections.values + [self.connections]).allSatisfy({ (1...64).contains($0) }) else {
            throw ValidationError("--connections and --compare-connections must be between 1 and 64, as serve's --apns-connections")
        }
        guard self.latencyMs >= 0, self.streams >= 1, self.slice ?? 100 >= 100 else {
            throw ValidationError("--latency-ms cannot be negative, and --streams positive, and --slice at least 100 (as serve's --fan-out-slice)")
        }
        guard self.shapes.count <= 4_096 else { throw ValidationError("at most 4,096 runs") }
    }

    func run() async throws {
        var emulator = APNsEmulator.Configuration(
            maximumConcurrentStreams: self.streams,
            acceptsUnknownTokens: true,
            recordsWire: true
        )
        emulator.latency = EmulatorLatency(base: .milliseconds(self.latencyMs))
        let shapes = self.shapes
        Self.note(
            "\(self.followers) followers per run; emulator: \(self.latencyMs) ms, \(self.streams) streams per connection; slice: "
                + (self.slice.map(String.init) ?? "the server's default")
        )
        var passed = false
        let mostInstances = shapes.map(\.instances).max() ?? 1
        try await GameNightStack.run(
            self.stack,
            label: "scale",
            instances: mostInstances,
            startsInstances: false,
            emulator: emulator,
            serveFlags: self.slice.map { ["--fan-out-slice", String($0)] } ?? []
        ) { stack in
            let followers = ScaleFollowers(stack: stack, bundleId: self.stack.bundleId, count: self.followers)
            try await followers.seed(runs: shapes.count, work: self.stack.work)
            var results: [ScaleRun.Result] = []
            for (run, shape) in shapes.enumerated() {
                let result = try await ScaleRun(stack: stack, followers: followers, shape: shape, run: run, timeout: self.timeout).measure()
                Self.report(run, result)
                results.append(result)
            }
            ScaleTable(results: results, baseline: ScaleShape(instances: 1, connections: self.connections)).print()
            passed = results.allSatisfy(\.verdict.isClean)
        }
        if !passed { throw ExitCode.failure }
    }

    /// Notes a run's outcome, and what was counted against it, on standard error.
    private static func report(_ run: Int, _ result: ScaleRun.Result) {
        let verdict = result.verdict
        let first = verdict.firstArrival.map { String(format: "%.3f", $0 - result.postedAt) } ?? "-"
        let last = result.seconds.map { String(format: "%.3f", $0) } ?? "-"
        Self.note(
            "run \(run), \(result.shape.instances) × \(result.shape.connections): \(verdict.reached) of \(verdict.followers) followers, "
                + "first push \(first) s, last \(last) s after the 202; \(verdict.duplicates) duplicates, \(verdict.outOfOrder) out of order, "
                + "\(verdict.unexpected) other pushes"
        )
        for example in verdict.examples { Self.note("  \(example)") }
    }

    /// Writes `line` to standard error, after `scale: `.
    static func note(_ line: String) {
        FileHandle.standardError.write(Data("scale: \(line)\n".utf8))
    }
}
