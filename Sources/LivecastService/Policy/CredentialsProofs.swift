import LivecastStore
import Synchronization

/// Whether APNs has accepted a push of an app under its current credentials (``Apps/credentialsProven(id:)``), as
/// the invalidation guard asks when a batch has refusals of unproven tokens and no accepted push: a proven app's
/// credentials are right, so such refusals are a stranger's made-up tokens, not a wrong environment or key.
///
/// Kept in PostgreSQL for every instance; each instance remembers an app it saw proven for ``memory``, so a busy app
/// costs a statement only now and then.
final class CredentialsProofs: Sendable {
    /// How long an instance trusts what it last learnt of an app (a changed signing key forgets the proof in
    /// PostgreSQL; another instance learns it within this time).
    static let memory: Duration = .seconds(300)

    private let apps: Apps
    /// When each app was last seen proven.
    private let provenAt = Mutex<[Int64: ContinuousClock.Instant]>([:])

    init(apps: Apps) { self.apps = apps }

    /// Whether the app's credentials are proven; `false` when PostgreSQL cannot tell (the guard then judges every
    /// token, as before client keys existed).
    func isProven(appID: Int64) async -> Bool {
        if self.remembers(appID) { return true }
        guard (try? await self.apps.credentialsProven(id: appID)) == true else { return false }
        self.provenAt.withLock { $0[appID] = .now }
        return true
    }

    /// Records that APNs accepted a push of the app: one statement per app and instance every ``memory``.
    func record(appID: Int64) async {
        guard !self.remembers(appID) else { return }
        guard (try? await self.apps.recordCredentialsProven(id: appID)) != nil else { return }
        self.provenAt.withLock { $0[appID] = .now }
    }

    private func remembers(_ appID: Int64) -> Bool {
        self.provenAt.withLock { $0[appID].map { ContinuousClock.now - $0 < Self.memory } ?? false }
    }
}
