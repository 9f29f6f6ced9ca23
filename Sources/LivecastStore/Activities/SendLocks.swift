/// PostgreSQL advisory locks that keep a token rotation from crossing a send: a dispatcher holds a target's lock
/// shared from reading its tokens until APNs answered; a rotation takes it exclusively in its transaction. So once
/// a rotation has committed, no send to the old token starts, and a send that read the old token finishes first.
///
/// Keys use PostgreSQL's two-integer form: a namespace and the row id folded into 31 bits (a collision only makes
/// one wait for the other).
package enum SendLocks {
    /// A standalone activity's sends.
    package static let activityNamespace: Int32 = 1
    /// The sends of a feed's fan-out.
    package static let feedNamespace: Int32 = 2

    /// The lock key of a row id within a namespace.
    package static func key(_ id: Int64) -> Int32 {
        Int32(truncatingIfNeeded: id % Int64(Int32.max))
    }
}
