import APNs

/// Guards tokens against a mass invalidation that is not one: when an unusual share of one batch of an app's
/// pushes comes back `Unregistered` or `BadDeviceToken`, the sign of a wrong environment or signing key rather than
/// of users uninstalling, none of those tokens is invalidated (their pushes stay owed) and the app's sending is
/// held (`apps.sending_held_at`) until an operator resumes it. Credential answers (`403`, such as
/// `BadEnvironmentKeyInToken`) never invalidate a token in any case.
///
/// A client key is published in every copy of the app, so the tokens it registers may be anyone's inventions; they
/// are unproven until APNs accepts a push to them. The guard judges proven tokens only, before and after the app's
/// credentials are proven, so a stranger's tokens can never hold the app. An unproven token APNs refuses is
/// invalidated once the credentials are proven (APNs accepted a push in this batch, or ever under the current signing
/// key: ``CredentialsProofs``). Before that it may be a real phone under a wrong environment or key: it is kept, its
/// push waits for the proof (``Judgement/credentialsProven``), and a batch of such refusals puts the credentials in
/// doubt, said loudly but holding nothing (``Judgement/doubt``).
struct InvalidationGuard: Sendable {
    /// The share of a batch answered as invalid tokens that trips the guard.
    var share: Double
    /// Batches smaller than this never trip it: a few uninstalls in a small batch are normal.
    var minimumBatch: Int

    /// The guard's verdict on one batch.
    struct Judgement: Sendable, Equatable {
        /// Why the batch's proven tokens trip the guard: its invalid-token answers are owed, not applied, and the
        /// app's sending is to be held.
        var holdReason: String?
        /// Whether the app's credentials are proven, as far as refusals of unproven tokens need to know: when not,
        /// those tokens are kept and their pushes wait for the proof.
        var credentialsProven = true
        /// Why the refusals of unproven tokens, before any proof, look like a wrong environment or key.
        var doubt: String?
    }

    /// Judges a batch's answers.
    /// - Parameters:
    ///   - outcomes: APNs' answers, one a push.
    ///   - unproven: Whether each push's token is unproven, in the same order.
    ///   - credentialsProven: Whether the app's credentials are proven; asked only when the batch refused unproven
    ///     tokens and accepted nothing.
    func judge(_ outcomes: [APNsOutcome], unproven: [Bool], credentialsProven: () async -> Bool) async -> Judgement {
        guard outcomes.contains(where: { $0.classification == .tokenInvalid }) else { return Judgement() }
        let proven = zip(outcomes, unproven).filter { !$0.1 }.map(\.0)
        var judgement = Judgement(holdReason: self.trip(proven))
        let unprovenOutcomes = zip(outcomes, unproven).filter(\.1).map(\.0)
        guard unprovenOutcomes.contains(where: { $0.classification == .tokenInvalid }) else { return judgement }
        judgement.credentialsProven = outcomes.contains { $0.classification == .delivered } ? true : await credentialsProven()
        if !judgement.credentialsProven, let reason = self.trip(unprovenOutcomes, of: "tokens client keys registered") {
            judgement.doubt =
                "\(reason) Or tokens a stranger made up: no push of the app has been accepted under its signing key yet, so they are kept and their pushes wait for the first"
        }
        return judgement
    }

    /// Why these answers trip the guard, or `nil` when they look like ordinary churn.
    /// - Parameter tokens: What the pushes went to, as the reason names them.
    func trip(_ outcomes: [APNsOutcome], of tokens: String? = nil) -> String? {
        guard outcomes.count >= self.minimumBatch else { return nil }
        let invalid = outcomes.filter { $0.classification == .tokenInvalid }
        guard !invalid.isEmpty, Double(invalid.count) >= self.share * Double(outcomes.count) else { return nil }
        let reasons = Set(invalid.map { $0.reason?.rawValue ?? "\($0.status ?? 0)" }).sorted().joined(separator: ", ")
        let pushes = tokens.map { "pushes to \($0)" } ?? "pushes"
        return "\(invalid.count) of \(outcomes.count) \(pushes) in one batch were answered \(reasons): a wrong environment or key?"
    }
}

/// The guard tripped in a fan-out: it stops at its checkpoint and goes back to the outbox, held with its app.
struct SendingHeld: Error {}
