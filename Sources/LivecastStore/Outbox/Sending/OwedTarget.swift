import PostgresNIO

/// A push APNs asked to retry later (429, 5xx, or a connection lost before its answer), owed to one target of an
/// update.
package struct OwedTarget: Sendable {
    /// What the target is (`owed_pushes.target_kind`).
    package enum Kind: String, Sendable, CaseIterable, StoredState {
        /// An activity: the push goes to its live update token when it is sent.
        case activity
        /// A push-to-start token.
        case pushToStart = "push_to_start"
        /// A channel of the registry.
        case channel
    }

    package var kind: Kind
    /// `activities.id`, `push_to_start_tokens.id` or `channels.id`.
    package var id: Int64
    /// An iOS 18 device's start goes with the update's channel payload.
    package var usesChannelPayload = false
    package var status: Int?
    package var reason: String
    /// Not sent yet: an older push to the target was in flight when this update reached it
    /// (``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``). It is due at once, and goes once that push is answered.
    package var isDeferred = false
    /// APNs refused its unproven token while the app's credentials were unproven: it waits, never due, until they are
    /// proven (`owed_pushes.awaits_proof`, migration `0042`), then goes again.
    package var awaitsProof = false

    package init(
        kind: Kind,
        id: Int64,
        usesChannelPayload: Bool = false,
        status: Int? = nil,
        reason: String,
        isDeferred: Bool = false,
        awaitsProof: Bool = false
    ) {
        self.kind = kind
        self.id = id
        self.usesChannelPayload = usesChannelPayload
        self.status = status
        self.reason = reason
        self.isDeferred = isDeferred
        self.awaitsProof = awaitsProof
    }

    /// The reason kept with a deferred push.
    package static let awaitingEarlierPush = "AwaitingEarlierPush"

    /// A push of this update held back for `target`, because an older push to it is still in flight.
    package static func deferred(_ kind: Kind, _ id: Int64) -> OwedTarget {
        OwedTarget(kind: kind, id: id, reason: Self.awaitingEarlierPush, isDeferred: true)
    }
}
