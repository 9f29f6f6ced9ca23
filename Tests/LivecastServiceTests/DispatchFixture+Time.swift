import LivecastTesting
import PostgresNIO

/// Time passing for the outbox's deadlines, without waiting for it: what a test of a retry deadline needs. The
/// deadlines are PostgreSQL's clock against stored times, so moving a stored time back is the same as waiting.
extension DispatchFixture {
    /// Makes every owed push due now, as its retry delay had passed.
    func makeOwedPushesDue() async throws {
        try await self.store.client.query("UPDATE owed_pushes SET not_before = now()")
    }

    /// Moves every owed push's retry deadline `seconds` earlier and makes it due now: as if that much time had
    /// passed since it was owed.
    func ageOwedPushes(bySeconds seconds: Double) async throws {
        try await self.store.client.query(
            "UPDATE owed_pushes SET not_before = now(), deadline = deadline - make_interval(secs => \(seconds))"
        )
    }

    /// Moves an update's acceptance `seconds` earlier and makes it due now: as if that much time had passed since
    /// it was accepted (an activity update's retry deadline counts from then).
    func ageUpdate(_ updateID: Int64, bySeconds seconds: Double) async throws {
        try await self.store.client.query(
            """
            UPDATE updates SET not_before = now(), created_at = created_at - make_interval(secs => \(seconds))
            WHERE id = \(updateID)
            """
        )
    }
}
