import APNsEmulator
import ArgumentParser
import Foundation

/// `renewal`: a game that outlives the activity lifetime, played through several instances, one killed during the
/// renewals, judged at the wire.
struct RenewalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "renewal",
        abstract: "Carry a feed's followers past a shortened activity lifetime through several instances, one killed, and judge the wire.",
        discussion: """
            Starts a throwaway PostgreSQL (provisioned with the CLI), the APNs emulator in this process (its iPhones end \
            an activity at --lifetime seconds, keep the push-to-start budget, record the wire) and --instances \
            `livecast serve` with the same --activity-lifetime and a reaper pass every 2 s. A feed with a No Storage \
            channel asks for renewal (before: half the lifetime). iPhones on iOS 17.5 (token followers), on iOS 18.2 \
            (channel followers), ones whose user swipes the activity away, and ones whose push-to-start token goes \
            (as before iOS 17.2) are started for everyone; an app on each reports what its iPhone shows, as LivecastKit \
            does. The feed is updated every 2 s for the lifetime and a quarter more, one instance is killed (SIGKILL) \
            during the renewals and started again, then the feed ends. Prints `renewal followers=… renewed=… \
            unrenewed=… final=… old_ended_early=… old_not_ended=… dismissed_started_again=… tokenless_marked=… \
            requests=… accepted=… ordering_violations=… sent_after_410=… sent_after_end=… dropped_by_devices=… \
            calls_failed=… verdict=… errors=…`, and exits 1 when a follower was not renewed before its end, a new \
            activity does not show the end, a token follower's old activity ended before its successor could be \
            updated, a swiped-away iPhone was started again, a rule broke at the wire, or a call failed.
            """
    )

    @OptionGroup var stack: GameNightOptions

    @Option(help: "The `livecast serve` instances on the database, 2 or more.")
    var instances = 3

    @Option(help: "The sizes: full (a 120 s lifetime, 60 token and 30 channel followers) or smoke (60 s, 12 and 6).")
    var preset: GameNightSizes.Preset = .full

    func validate() throws {
        guard self.instances >= 2 else { throw ValidationError("--instances must be at least 2: one is killed and the others go on") }
    }

    func run() async throws {
        let sizes = RenewalSizes(self.preset)
        var emulator = APNsEmulator.Configuration(recordsWire: true)
        emulator.activityLifetime = sizes.lifetime
        let serveFlags = [
            "--activity-lifetime", String(sizes.lifetime), "--lifetime-margin", String(sizes.lifetime / 10), "--reap-interval", "2",
        ]
        var passed = false
        try await GameNightStack.run(self.stack, label: "renewal", instances: self.instances, emulator: emulator, serveFlags: serveFlags) { stack in
            Self.note(
                "\(sizes.tokenFollowers) token and \(sizes.channelFollowers) channel followers, \(sizes.dismissing) swiped away, "
                    + "\(sizes.tokenless) without a push-to-start token; a \(sizes.lifetime) s lifetime on \(self.instances) instances"
            )
            let game = RenewalGame(stack: stack, sizes: sizes, instances: self.instances)
            let played = try await game.play()
            let settled = try await GameNightSettle(emulator: stack.emulator, timeout: 120).wait(for: played.finalTargets) { record in
                record.event == "end" && record.contentState == played.finalContentState
            }
            Self.note("after the end: waited \(GameNightReport.seconds(settled.waited)) s, \(settled.notEnded) targets without the end")
            let verdict = await RenewalVerdict(stack: stack, game: game, played: played).judge()
            print(verdict.line)
            for failure in verdict.failures { Self.note(failure) }
            passed = verdict.failures.isEmpty
        }
        if !passed { throw ExitCode.failure }
    }

    static func note(_ line: String) {
        FileHandle.standardError.write(Data("renewal: \(line)\n".utf8))
    }
}

/// The renewal game's sizes.
struct RenewalSizes: Sendable {
    /// The activity lifetime of the servers and the iPhones, in seconds.
    var lifetime: Int
    var tokenFollowers: Int
    var channelFollowers: Int
    /// iPhones whose user swipes the feed's activity away.
    var dismissing: Int
    /// iPhones whose push-to-start token goes after the start.
    var tokenless: Int

    init(_ preset: GameNightSizes.Preset) {
        switch preset {
        case .smoke: (self.lifetime, self.tokenFollowers, self.channelFollowers, self.dismissing, self.tokenless) = (60, 12, 6, 3, 3)
        case .full, .brownout: (self.lifetime, self.tokenFollowers, self.channelFollowers, self.dismissing, self.tokenless) = (120, 60, 30, 10, 10)
        }
    }

    /// The renewal goes out this long before the lifetime's end: half of it.
    var before: Int { self.lifetime / 2 }
    /// Seconds of updates: the lifetime and a quarter more, so every follower outlives its first activity.
    var seconds: Int { self.lifetime + self.lifetime / 4 }
    /// When an instance is killed: in the middle of the renewals (due from `lifetime - before` on, spread over half
    /// of `before`).
    var killAt: Int { self.lifetime - self.before + self.before / 4 }
    /// How long the killed instance stays down.
    var restartAfter: Int { max(self.before / 4, 5) }
}
