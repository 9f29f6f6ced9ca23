import PostgresNIO

/// What a dead letter gave up on (`dead_letters.target_kind`): one target's push, or a whole fan-out.
package enum DeadLetterTargetKind: String, Sendable, CaseIterable, StoredState {
    /// An activity's update, by its row.
    case activity
    /// A start to a push-to-start token, by its row.
    case pushToStart = "push_to_start"
    /// A broadcast, by the channel's row.
    case channel
    /// A feed's whole fan-out (or a slice of it), by the feed's row.
    case feed

    /// The kind of a push owed to a target (``OwedTarget/Kind``).
    package init(_ owed: OwedTarget.Kind) {
        switch owed {
        case .activity: self = .activity
        case .pushToStart: self = .pushToStart
        case .channel: self = .channel
        }
    }

    /// As the API shows it: `pushToStart` where the table says `push_to_start`.
    package var apiName: String { self == .pushToStart ? "pushToStart" : self.rawValue }
}
