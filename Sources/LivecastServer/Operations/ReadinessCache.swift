/// `GET /ready`'s answer, kept for a moment: the route needs no key, and each fresh answer costs PostgreSQL two
/// queries, so anyone hitting it in a loop gets the same answer for ``lifetime`` instead of loading the database.
/// Callers that arrive while an answer is being made wait for that one.
actor ReadinessCache {
    /// What `/ready` found: each check's verdict, and what is wrong for some apps only.
    struct Answer: Sendable {
        var checks: [String: String]
        var detail: [String: String]

        /// Whether this instance can serve: PostgreSQL answers, every migration is applied, the dispatcher runs.
        var isReady: Bool { self.checks.values.allSatisfy { $0 == "ok" || $0 == "not run here" } }
    }

    /// How long an answer is served again. Defaults to 1 second.
    let lifetime: Duration
    /// The time now: the continuous clock's, or a test's.
    private let now: @Sendable () -> ContinuousClock.Instant
    private var current: (madeAt: ContinuousClock.Instant, answer: Task<Answer, Never>)?

    init(lifetime: Duration = .seconds(1), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.lifetime = lifetime
        self.now = now
    }

    /// The kept answer while it is younger than ``lifetime``, else a new one from `make`.
    func answer(_ make: @escaping @Sendable () async -> Answer) async -> Answer {
        let now = self.now()
        if let current, now - current.madeAt < self.lifetime { return await current.answer.value }
        let answer = Task { await make() }
        self.current = (now, answer)
        return await answer.value
    }
}
