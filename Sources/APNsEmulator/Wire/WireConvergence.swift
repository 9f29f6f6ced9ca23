/// How long targets took to accept a given timestamp, from ``WireJudge/convergence(_:timestamp:since:targets:)``.
public struct WireConvergence: Sendable, Hashable {
    /// Seconds from the start until each converged target first accepted the timestamp.
    public let delayByTarget: [String: Double]
    /// The values of ``delayByTarget``, shortest first.
    public let delays: [Double]
    /// Targets that never accepted the timestamp (or a newer one).
    public let missing: Set<String>

    /// Creates figures.
    /// - Parameters:
    ///   - delayByTarget: Seconds until each converged target accepted.
    ///   - missing: Targets that never did.
    public init(delayByTarget: [String: Double], missing: Set<String>) {
        self.delayByTarget = delayByTarget
        self.delays = delayByTarget.values.sorted()
        self.missing = missing
    }

    /// Whether every target converged.
    public var isComplete: Bool { self.missing.isEmpty }

    /// The nearest-rank percentile of ``delays``: `percentile(50)` is the median, `percentile(100)` the maximum.
    /// - Parameter p: From 0 to 100.
    /// - Returns: `nil` when no target converged.
    public func percentile(_ p: Double) -> Double? {
        guard !self.delays.isEmpty else { return nil }
        let rank = Int((min(max(p, 0), 100) / 100 * Double(self.delays.count)).rounded(.up))
        return self.delays[min(max(rank, 1), self.delays.count) - 1]
    }

    /// The longest delay, or `nil` when no target converged.
    public var maximum: Double? { self.delays.last }
}
