/// Judges a wire log (``WireRecord``s from ``APNsEmulator/wireRecords`` or `GET /emulator/wire`) by what reached
/// the emulator rather than by what the simulated devices show, which forgive out-of-order pushes.
///
/// Each target (device token or channel) is judged on its own, in arrival order: a record answered `200` counts
/// for every request that arrived after it (a greater ``WireRecord/sequence``). Pure code, no I/O.
///
/// ```swift
/// let verdict = WireJudge.judge(emulator.wireRecords)
/// #expect(verdict.isClean, "\(verdict)")
/// ```
public enum WireJudge {
    /// Judges a wire log.
    /// - Parameter records: The records; sorted by sequence here.
    /// - Returns: The violations and figures; see ``WireVerdict``.
    public static func judge(_ records: [WireRecord]) -> WireVerdict {
        var verdict = WireVerdict()
        var histories: [String: TargetHistory] = [:]
        for record in records.sorted(by: { $0.sequence < $1.sequence }) {
            verdict.requests += 1
            var history = histories[record.target] ?? TargetHistory()
            history.judge(record, into: &verdict)
            history.learn(record)
            if record.isAccepted {
                verdict.accepted += 1
                verdict.lastAccepted[record.target] = record
            }
            histories[record.target] = history
        }
        return verdict
    }

    /// How long each target took to accept a push with a timestamp of at least `timestamp`.
    /// - Parameters:
    ///   - records: The wire log.
    ///   - timestamp: The `aps.timestamp` (or a newer one) each target should accept.
    ///   - since: The wall-clock start, in seconds since 1970 (such as when the update was sent to the backend).
    ///   - targets: The targets that should converge, as ``WireRecord/target`` writes them.
    /// - Returns: Per target, the seconds from `since` to its earliest such acceptance (``WireRecord/answeredAt``, or
    ///   ``WireRecord/arrivedAt`` when absent), which is negative for one accepted before `since`; and the targets that
    ///   never accepted one.
    public static func convergence(_ records: [WireRecord], timestamp: Int, since: Double, targets: Set<String>) -> WireConvergence {
        var delays: [String: Double] = [:]
        for record in records where record.isAccepted && targets.contains(record.target) {
            guard let pushed = record.timestamp, pushed >= timestamp else { continue }
            let delay = (record.answeredAt ?? record.arrivedAt) - since
            delays[record.target] = min(delays[record.target] ?? delay, delay)
        }
        return WireConvergence(delayByTarget: delays, missing: targets.subtracting(delays.keys))
    }
}
