import APNs

/// Guards tokens against a mass invalidation that is not one: when an unusual share of one batch of an app's
/// pushes comes back `Unregistered` or `BadDeviceToken`, the sign of a wrong environment or signing key rather than
/// of users uninstalling, none of those tokens is invalidated (their pushes stay owed) and the app's sending is
/// held (`apps.sending_held_at`) until an operator resumes it. Credential answers (`403`, such as
/// `BadEnvironmentKeyInToken`) never invalidate a token in any case.
///
/// A client key is published in every copy of the app, so the tokens it registers may be anyone's inventions; they
/// are unproven until APNs accepts a push to them. Once the app's credentials are known to work (APNs accepted a
/// push in this batch, or ever under the current credentials: ``CredentialsProofs``), the guard judges only proven
/// tokens, and an unproven token APNs refuses is simply invalidated: a stranger's made-up tokens can neither hold the
/// app nor stay to be sent to again. Until then every token is judged, so a wrong environment from the first push
/// still trips the guard and loses nothing.
struct InvalidationGuard: Sendable {
    /// The share of a batch answered as invalid tokens that trips the guard.
    var share: Double
    /// Batches smaller than this never trip it: a few uninstalls in a small batch are normal.
    var minimumBatch: Int

    /// Why a batch's answers trip the guard, or `nil` when they look like ordinary churn.
    /// - Parameters:
    ///   - outcomes: APNs' answers, one a push.
    ///   - unproven: Whether each push's token is unproven, in the same order.
    ///   - credentialsProven: Whether the app's credentials are proven; asked only when the batch cannot tell.
    func trip(_ outcomes: [APNsOutcome], unproven: [Bool], credentialsProven: () async -> Bool) async -> String? {
        guard outcomes.contains(where: { $0.classification == .tokenInvalid }) else { return nil }
        var judged = outcomes
        if unproven.contains(true) {
            let accepted = outcomes.contains { $0.classification == .delivered }
            let proven = accepted ? true : await credentialsProven()
            if proven {
                judged = zip(outcomes, unproven).filter { !$0.1 }.map(\.0)
            }
        }
        return self.trip(judged)
    }

    /// Why these answers trip the guard, or `nil` when they look like ordinary churn.
    func trip(_ outcomes: [APNsOutcome]) -> String? {
        guard outcomes.count >= self.minimumBatch else { return nil }
        let invalid = outcomes.filter { $0.classification == .tokenInvalid }
        guard !invalid.isEmpty, Double(invalid.count) >= self.share * Double(outcomes.count) else { return nil }
        let reasons = Set(invalid.map { $0.reason?.rawValue ?? "\($0.status ?? 0)" }).sorted().joined(separator: ", ")
        return "\(invalid.count) of \(outcomes.count) pushes in one batch were answered \(reasons): a wrong environment or key?"
    }
}

/// The guard tripped in a fan-out: it stops at its checkpoint and goes back to the outbox, held with its app.
struct SendingHeld: Error {}
