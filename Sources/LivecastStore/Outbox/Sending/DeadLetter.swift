/// What the outbox finally gave up on, for one target: kept in `dead_letters` with the reason and the tries.
package struct DeadLetter: Sendable {
    package var updateID: Int64
    /// `activity`, `push_to_start`, `channel` (``OwedTarget/Kind``), or `feed` for a whole fan-out.
    package var targetKind: String
    package var targetID: Int64
    package var reason: String
    package var attempts: Int
}
