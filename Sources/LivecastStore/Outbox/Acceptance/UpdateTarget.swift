import LivecastCore
import Logging
import PostgresNIO

/// What an update or end is accepted into, read and locked by the accepting transaction: a feed (``FeedTarget``),
/// a single activity (``ActivityTarget``), or a feed's start for an audience (``FeedStartTarget``).
/// ``UpdateAcceptance`` applies the same rules to all; a target only says what differs.
protocol UpdateTarget: SendableMetatype {
    /// Its row's id.
    var id: Int64 { get }
    /// The last timestamp accepted for it; the next one must come after it.
    var lastTimestamp: Int? { get }
    /// What the payload is checked for: a device push, or a broadcast when only a channel receives it.
    var destination: PushDestination { get }
    /// Whether an update in the same second as the last is coalesced: held until its second begins, in the place of
    /// one still waiting (``supersedePending(on:logger:)``).
    var coalesces: Bool { get }

    /// The payload `content` makes for this target at `timestamp`, checked for its destination.
    /// - Returns: The payload, its bytes as sent, and whether its `dismissal-date` was clamped.
    /// - Throws: ``StoreError`` `payloadTooLarge` or `invalid` (``OutboxRules/encode(_:for:)``).
    func payload(for content: UpdateContent, at timestamp: Int) throws -> (payload: LiveActivityPayload, bytes: String, dismissalDateClamped: Bool)
    /// Supersedes the target's pending updates that no dispatcher has begun: a newer one replaces them. Called for a
    /// target that ``coalesces`` only.
    /// - Returns: The timestamps of the updates superseded.
    func supersedePending(on connection: PostgresConnection, logger: Logger) async throws -> [Int]
    /// Points an outbox row at the target.
    /// - Throws: ``StoreError`` for a form of the payload the target adds that breaks ActivityKit's rules.
    func address(_ row: inout OutboxRow) throws
    /// Records on the target that `payload` was accepted (its timestamp, and its end).
    func recordAccepted(_ payload: LiveActivityPayload, on connection: PostgresConnection, logger: Logger) async throws
}

/// The target of an update or an end (a feed, an activity), whose payload is the content's own with the target's
/// content state and `stale-date`; a newer update coalesces with a pending one.
protocol ContentTarget: UpdateTarget {
    /// The content state to send: the content's own, or the one the target keeps when the content has none.
    func contentState(for content: UpdateContent) throws -> RawJSON?
    /// The `stale-date` to send at `timestamp`.
    func staleDate(for content: UpdateContent, timestamp: Int) -> Int?
}

extension ContentTarget {
    var coalesces: Bool { true }

    /// The update's or end's payload: the content's own, with the target's content state and `stale-date`.
    func payload(for content: UpdateContent, at timestamp: Int) throws -> (payload: LiveActivityPayload, bytes: String, dismissalDateClamped: Bool) {
        let (payload, clamped) = content.payload(
            timestamp: timestamp,
            contentState: try self.contentState(for: content),
            staleDate: self.staleDate(for: content, timestamp: timestamp)
        )
        return (payload, String(decoding: try OutboxRules.encode(payload, for: self.destination), as: UTF8.self), clamped)
    }
}
