import APNsEmulator
import Foundation

/// Waits, after the end, until the wire is done: every target that should end has accepted the end with the final
/// content and no request has reached the emulator for ``quiet``; or no request at all for ``giveUp`` (nothing more
/// will come: serve retries within seconds); or ``timeout`` has passed.
struct GameNightSettle: Sendable {
    let emulator: APNsEmulator
    /// The quiet that ends the wait once every target has ended.
    var quiet = 5.0
    /// The quiet that ends the wait even though targets have not ended.
    var giveUp = 30.0
    /// The longest wait.
    var timeout: Double

    /// How the wait ended.
    struct Outcome: Sendable {
        /// Seconds waited.
        var waited: Double
        /// Targets that had not accepted the end when the wait ended.
        var notEnded: Int
        /// Whether the wire went quiet (rather than the timeout passing).
        var isQuiet: Bool
    }

    /// Waits. - Parameter isFinal: Whether an accepted record is the end every target should show last.
    func wait(for targets: Set<String>, isFinal: (WireRecord) -> Bool) async throws -> Outcome {
        let start = Date().timeIntervalSince1970
        var cursor = -1
        var lastArrival = start
        var ended: [String: Bool] = [:]
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let now = Date().timeIntervalSince1970
            let fresh = self.emulator.wireRecords(after: cursor)
            if let newest = fresh.last { lastArrival = max(lastArrival, newest.arrivedAt) }
            // Records are taken in arrival order once answered (or once no answer can be expected any more: a GOAWAY
            // or a dropped connection leaves none), so the last accepted one per target is the last taken.
            for record in fresh {
                if record.status == nil, now - record.arrivedAt < 5 { break }
                if record.isAccepted, targets.contains(record.target) { ended[record.target] = isFinal(record) }
                cursor = record.sequence
            }
            let notEnded = targets.count - ended.values.filter { $0 }.count
            let quietFor = now - lastArrival
            if (notEnded == 0 && quietFor >= self.quiet) || quietFor >= self.giveUp {
                return Outcome(waited: now - start, notEnded: notEnded, isQuiet: true)
            }
            if now - start >= self.timeout {
                return Outcome(waited: now - start, notEnded: notEnded, isQuiet: false)
            }
        }
    }
}
