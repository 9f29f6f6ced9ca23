import APNsEmulator
import ArgumentParser
import Foundation
import Synchronization

/// What the game night needs to start its stack: unlike the other modes, it makes its own database (it restarts it),
/// so it takes no API key and no `DATABASE_URL`.
struct GameNightOptions: ParsableArguments {
    @Option(help: "The livecast executable: its `migrate`, `apps add` and `keys create` provision the database, its `serve` runs each instance.")
    var livecast: String

    @Option(help: "The app's signing key, TEAMID:KEYID:PATH of its .p8 file, which the in-process APNs emulator trusts.")
    var signingKey: String

    @Option(help: "The app's bundle id.")
    var bundleId = "com.example.bench"

    @Option(
        help: """
            A directory for the servers' output (gamenight-serve-N.out, .err; scale-serve-N.… for `scale`), the process \
            ids of the servers and PostgreSQL (gamenight-serve-N.pid, gamenight-postgres.pid), the master key and the \
            emulator's certificate.
            """
    )
    var work: String
}

/// `gamenight`: a game played through several instances (two by default) while everything goes wrong, judged at the
/// wire.
struct GameNightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamenight",
        abstract: "Play a game through several instances under faults and judge what reached APNs, push by push.",
        discussion: """
            Starts a throwaway PostgreSQL (provisioned with the CLI: migrate, apps add, keys create), the APNs emulator \
            in this process recording the wire, and --instances `livecast serve` on that database. Creates a feed with a \
            Most Recent Message channel and registers --followers token followers, then posts --rate updates a second \
            for --seconds, to the instances in turn (round robin), and the end. From the first update the emulator \
            refuses --failure-share of the pushes (503, now and then a GOAWAY or a dropped connection) and three \
            followers' tokens answer 410; --rotations followers report a new token and --late-fans join during the \
            game; one instance (the second) is killed (SIGKILL) at --kill-at and started again --restart-after later; \
            PostgreSQL restarts at --postgres-restart-at, down for --postgres-down. The client retries a call answered \
            429, 502, 503, 504 or not at all on the next instance, up to 8 tries. After the end it waits until the wire is quiet, judges the wire records, and \
            prints `gamenight followers=… updates=… requests=… accepted=… ordering_violations=… sent_after_410=… \
            sent_after_end=… wasted=… convergence_p50=… convergence_p99=… convergence_max=… end_p100=… \
            followers_not_final=… channel_final=… rotated_old_token_after=… registrations_failed=… updates_failed=… \
            client_retries=… verdict=… errors=…`: followers registered (late fans included) and updates accepted; \
            convergence in seconds, from each update's 202 until every follower registered before it, and the \
            channel, accepted it or a newer one (end_p100: the end's longest). It exits 1 after printing when a \
            push is out of order, sent after a 410 or after an accepted end, a follower or the channel does not show \
            the final end, a rotated-away token accepts a push after its rotation was answered, a call failed after \
            its retries, or convergence exceeds --max-convergence.
            """
    )

    @OptionGroup var stack: GameNightOptions

    @Option(help: "The `livecast serve` instances on the database, 2 or more; the calls go round them.")
    var instances = 2

    @Option(help: "The sizes to start from: full (4,000 followers, 4 updates/s for 90 s) or smoke (300, 2/s for 25 s).")
    var preset: GameNightSizes.Preset = .full

    @Option(help: "Token followers registered before the game.")
    var followers: Int?

    @Option(help: "Updates a second.")
    var rate: Double?

    @Option(help: "Seconds of updates before the end.")
    var seconds: Double?

    @Option(help: "The share of pushes the emulator refuses.")
    var failureShare: Double?

    @Option(help: "Followers that report a new token during the game.")
    var rotations: Int?

    @Option(help: "Followers that join during the game.")
    var lateFans: Int?

    @Option(help: "Seconds into the game when one instance is killed.")
    var killAt: Double?

    @Option(help: "Seconds the killed instance stays down.")
    var restartAfter: Double?

    @Option(help: "Seconds into the game when PostgreSQL restarts.")
    var postgresRestartAt: Double?

    @Option(help: "Seconds PostgreSQL stays down when it restarts.")
    var postgresDown: Double?

    @Option(help: "Fail when an update takes longer to converge, in seconds; 0 for no limit (brownout: 15, else none).")
    var maxConvergence: Double?

    @Option(help: "Milliseconds the emulator waits before each answer, as APNs does (default: none).")
    var latencyMs = 0

    @Option(help: "Followers per fan-out slice on every instance (serve's --fan-out-slice, 100 or more); default: the server's.")
    var fanOutSlice: Int?

    @Option(help: "Seconds to wait after the end for the wire to go quiet.")
    var settleTimeout = 300.0

    @Option(help: "A file to write the wire records and the API's answers to, as JSON, for a post-mortem.")
    var save: String?

    /// The preset's sizes with the options given.
    var sizes: GameNightSizes {
        var sizes = GameNightSizes(self.preset)
        if let followers { sizes.followers = followers }
        if let rate { sizes.rate = rate }
        if let seconds { sizes.seconds = seconds }
        if let failureShare { sizes.failureShare = failureShare }
        if let rotations { sizes.rotations = rotations }
        if let lateFans { sizes.lateFans = lateFans }
        if let killAt { sizes.killAt = killAt }
        if let restartAfter { sizes.restartAfter = restartAfter }
        if let postgresRestartAt { sizes.postgresRestartAt = postgresRestartAt }
        if let postgresDown { sizes.postgresDown = postgresDown }
        if let maxConvergence { sizes.maxConvergence = maxConvergence > 0 ? maxConvergence : nil }
        return sizes
    }

    func validate() throws {
        if let problem = self.sizes.problem { throw ValidationError(problem) }
        guard self.latencyMs >= 0, self.fanOutSlice ?? 100 >= 100 else {
            throw ValidationError("--latency-ms cannot be negative, and --fan-out-slice must be at least 100 (as serve's)")
        }
        guard self.instances >= 2 else { throw ValidationError("--instances must be at least 2: the game kills one and goes on with the others") }
    }

    func run() async throws {
        let sizes = self.sizes
        var passed = false
        var emulator = APNsEmulator.Configuration(acceptsUnknownTokens: true, recordsWire: true)
        emulator.latency = EmulatorLatency(base: .milliseconds(self.latencyMs))
        let sliceFlags = self.fanOutSlice.map { ["--fan-out-slice", String($0)] } ?? []
        try await GameNightStack.run(self.stack, instances: self.instances, emulator: emulator, serveFlags: sliceFlags) { stack in
            let game = GameNightGame(stack: stack, sizes: sizes)
            Self.note(
                "\(sizes.followers) followers (slices: \(self.fanOutSlice.map(String.init) ?? "the server's")), \(sizes.updates) updates at \(sizes.rate)/s over \(sizes.seconds) s on "
                    + "\(self.instances) instances, \(self.latencyMs) ms APNs latency, "
                    + "\(sizes.rotations) rotations, \(sizes.lateFans) late fans"
            )
            let outcome = try await game.play()
            var targets: Set<String> = [outcome.channelTarget]
            for follower in game.ledger.followers where !follower.isUnregistered { targets.insert("device:\(follower.token)") }
            let settled = try await GameNightSettle(emulator: stack.emulator, timeout: self.settleTimeout).wait(for: targets) { record in
                record.event == "end"
                    && record.contentState.flatMap { try? JSONDecoder().decode([String: Int].self, from: Data($0.utf8)) }
                        == outcome.finalContentState
            }
            Self.note(
                "after the end: waited \(GameNightReport.seconds(settled.waited)) s, "
                    + (settled.isQuiet ? "the wire went quiet" : "the wire was still busy")
                    + (settled.notEnded > 0 ? ", \(settled.notEnded) targets without the end" : "")
            )
            let records = stack.emulator.wireRecords
            let faults = Dictionary(grouping: records.filter { $0.status != 200 }) { $0.status.map(String.init) ?? "no answer" }
            Self.note(
                "wire: \(records.count) requests; refused or unanswered: "
                    + faults.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value.count)" }.joined(separator: ", ")
            )
            let report = GameNightReport(
                records: records,
                ledger: game.ledger,
                outcome: outcome,
                clientRetries: stack.client.retries.load(ordering: .relaxed),
                maxConvergence: sizes.maxConvergence
            )
            report.print(outcome: outcome)
            if let save = self.save {
                try GameNightRecording(records: records, ledger: game.ledger, outcome: outcome).write(to: save)
            }
            if report.errors > 0 {
                for instance in 0..<self.instances { Self.note("instance \(instance)'s last words:\n\(stack.serveErrors(instance, lines: 10))") }
            }
            passed = report.failures.isEmpty
        }
        if !passed { throw ExitCode.failure }
    }

    private static func note(_ line: String) {
        FileHandle.standardError.write(Data("gamenight: \(line)\n".utf8))
    }
}
