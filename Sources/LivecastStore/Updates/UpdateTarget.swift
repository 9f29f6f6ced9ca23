import LivecastCore
import Logging
import PostgresNIO

/// What an update or end is accepted into, read and locked by the accepting transaction: a feed (``FeedTarget``)
/// or a single activity (``ActivityTarget``). ``UpdateAcceptance`` applies the same rules to both; a target only
/// says what differs.
protocol UpdateTarget {
    /// The last timestamp accepted for it; the next one must come after it.
    var lastTimestamp: Int? { get }
    /// What the payload is checked for: a device push, or a broadcast when only a channel receives it.
    var destination: PushDestination { get }

    /// The content state to send: the content's own, or the one the target keeps when the content has none.
    func contentState(for content: UpdateContent) throws -> RawJSON?
    /// The `stale-date` to send at `timestamp`.
    func staleDate(for content: UpdateContent, timestamp: Int) -> Int?
    /// Supersedes the target's pending updates that no dispatcher has begun: a newer one replaces them.
    /// - Returns: The timestamps of the updates superseded.
    func supersedePending(on connection: PostgresConnection, logger: Logger) async throws -> [Int]
    /// Points an outbox row at the target.
    func address(_ row: inout OutboxRow)
    /// Records on the target that `payload` was accepted (its timestamp, and its end).
    func recordAccepted(_ payload: LiveActivityPayload, on connection: PostgresConnection, logger: Logger) async throws
}
