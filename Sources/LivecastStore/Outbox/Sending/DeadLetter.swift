/// What the outbox finally gave up on, for one target: kept in `dead_letters` with the reason and the tries.
package struct DeadLetter: Sendable {
    package var updateID: Int64
    package var targetKind: DeadLetterTargetKind
    package var targetID: Int64
    package var reason: String
    package var attempts: Int
}
