import ArgumentParser

/// How big a game night is and when its faults strike; seconds count from the first update.
struct GameNightSizes: Sendable {
    /// Token followers registered before the game.
    var followers: Int
    /// Updates posted a second.
    var rate: Double
    /// How long updates are posted; the end follows.
    var seconds: Double
    /// The share of APNs requests the emulator refuses (mostly 503, a few GOAWAYs and dropped connections).
    var failureShare: Double
    /// Followers that report a new update token during the game.
    var rotations: Int
    /// Followers registered during the game.
    var lateFans: Int
    /// When one instance is killed (SIGKILL); `nil` for never.
    var killAt: Double?
    /// How long it stays dead before it is started again.
    var restartAfter: Double
    /// When PostgreSQL is restarted (a fast shutdown, then a start on the same port and data); `nil` for never.
    var postgresRestartAt: Double?
    /// How long PostgreSQL stays down when it restarts.
    var postgresDown = 1.0
    /// The longest convergence allowed, in seconds; `nil` for no limit.
    var maxConvergence: Double?

    /// Which sizes to start from.
    enum Preset: String, CaseIterable, ExpressibleByArgument, Sendable {
        /// 4,000 followers, 4 updates a second for 90 s: `scripts/bench.sh --gamenight`.
        case full
        /// About 300 followers, 2 updates a second for 25 s: `scripts/bench.sh --smoke`, in CI.
        case smoke
        /// Issue #44's brownout: 3,000 followers, four updates 1.3 s apart and the end, 30 % of pushes refused, no
        /// instance killed and no restart; every update must reach every follower within 15 s.
        case brownout
    }

    /// The sizes of a preset.
    init(_ preset: Preset) {
        switch preset {
        case .full:
            self.init(
                followers: 4_000,
                rate: 4,
                seconds: 90,
                failureShare: 0.2,
                rotations: 200,
                lateFans: 400,
                killAt: 30,
                restartAfter: 14,
                postgresRestartAt: 60,
                maxConvergence: nil
            )
        case .smoke:
            self.init(
                followers: 300,
                rate: 2,
                seconds: 25,
                failureShare: 0.2,
                rotations: 20,
                lateFans: 40,
                killAt: 8,
                restartAfter: 5,
                postgresRestartAt: 16,
                maxConvergence: nil
            )
        case .brownout:
            self.init(
                followers: 3_000,
                rate: 1 / 1.3,
                seconds: 5.2,
                failureShare: 0.3,
                rotations: 0,
                lateFans: 0,
                killAt: nil,
                restartAfter: 0,
                postgresRestartAt: nil,
                maxConvergence: 15
            )
        }
    }

    private init(
        followers: Int,
        rate: Double,
        seconds: Double,
        failureShare: Double,
        rotations: Int,
        lateFans: Int,
        killAt: Double?,
        restartAfter: Double,
        postgresRestartAt: Double?,
        maxConvergence: Double?
    ) {
        self.followers = followers
        self.rate = rate
        self.seconds = seconds
        self.failureShare = failureShare
        self.rotations = rotations
        self.lateFans = lateFans
        self.killAt = killAt
        self.restartAfter = restartAfter
        self.postgresRestartAt = postgresRestartAt
        self.maxConvergence = maxConvergence
    }

    /// How many updates are posted before the end.
    var updates: Int { max(1, Int((self.rate * self.seconds + 1e-9).rounded(.down))) }

    /// How many followers answer `410 Unregistered`.
    static let unregisteredFollowers = 3

    /// What cannot be played. - Returns: the problem, or `nil`.
    var problem: String? {
        if self.followers < Self.unregisteredFollowers + self.rotations + 1 {
            return "--followers must exceed --rotations by at least \(Self.unregisteredFollowers + 1) (three of them answer 410)"
        }
        if self.rate <= 0 || self.seconds <= 0 { return "--rate and --seconds must be positive" }
        if !(0..<1).contains(self.failureShare) { return "--failure-share must be at least 0 and below 1" }
        if self.lateFans < 0 || self.rotations < 0 { return "--rotations and --late-fans cannot be negative" }
        if self.killAt ?? 0 < 0 || self.restartAfter < 0 || self.postgresRestartAt ?? 0 < 0 || self.postgresDown < 0 {
            return "--kill-at, --restart-after, --postgres-restart-at and --postgres-down cannot be negative"
        }
        if (self.killAt ?? 0) + self.restartAfter >= self.seconds || self.postgresRestartAt ?? 0 >= self.seconds {
            return "the restarts must happen before --seconds is over"
        }
        return nil
    }
}
