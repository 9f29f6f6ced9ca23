import PostgresNIO

/// What a flagged day compares (`delivery_divergences.subject_kind`).
package enum DivergenceSubject: String, Sendable, CaseIterable, StoredState {
    /// A broadcast channel: Apple's published and delivered against Livecast's broadcasts.
    case channel
    /// A push type: Apple's delivered device pushes against Livecast's accepted ones.
    case pushType
}
