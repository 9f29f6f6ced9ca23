/// What one row of a bulk import did: registered, with what the registration did, or refused, with why.
package enum ImportOutcome<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The row is written, entirely.
    case registered(Value)
    /// The row is refused and nothing of it is written.
    case refused(StoreError)
}
