import APNsEmulator
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO

extension DispatchFixture {
    /// A reaper on the fixture's database, deleting channels through the fixture's client.
    func reaper(_ policy: ReaperPolicy = ReaperPolicy(staleDismissalDelay: .seconds(600))) -> Reaper {
        let apns = self.apns
        return Reaper(
            database: self.store.client,
            appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
            policy: policy,
            logger: self.store.logger
        )
    }

    /// Runs SQL for its side effects.
    func sql(_ query: PostgresQuery) async throws {
        try await self.store.client.query(query)
    }

    /// The single integer a query returns.
    func number(_ query: PostgresQuery) async throws -> Int {
        for try await value in try await self.store.client.query(query).decode(Int.self) { return value }
        return 0
    }

    /// What the app keeps of the reaper's last pass over it: its summary, and whether its time is set.
    func lastReap() async throws -> (summary: String?, isDated: Bool) {
        let rows = try await self.store.client.query("SELECT reap_summary, reaped_at IS NOT NULL FROM apps WHERE id = \(self.store.appID)")
        for try await row in rows.decode((String?, Bool).self) { return row }
        return (nil, false)
    }

    /// An activity's state in the store.
    func state(ofActivity key: String) async throws -> String? {
        for try await state in try await self.store.client.query("SELECT state FROM activities WHERE activity_key = \(key)").decode(String.self) {
            return state
        }
        return nil
    }
}
