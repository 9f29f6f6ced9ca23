/// What the outbox finally gave up on, for one target: kept in `dead_letters` with the reason and the tries.
package struct DeadLetter: Sendable {
    package var updateID: Int64
    /// `activity`, `push_to_start`, `channel` (``OwedTarget/Kind``), or `feed` for a whole fan-out.
    package var targetKind: String
    package var targetID: Int64
    package var reason: String
    package var attempts: Int

    package init(updateID: Int64, targetKind: String, targetID: Int64, reason: String, attempts: Int) {
        self.updateID = updateID
        self.targetKind = targetKind
        self.targetID = targetID
        self.reason = reason
        self.attempts = attempts
    }
}
