import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Synchronization
import Testing

/// Send locks (``SendLocks``, ``Outbox/withSendLocks(_:_:on:_:)``; docs/ARCHITECTURE.md, Advisory locks): a sender
/// holds its targets' advisory locks shared from reading their tokens until APNs answers, so senders never wait for
/// each other, while a token rotation, which takes the lock exclusively, waits for them and then keeps new sends out
/// until it commits.
@Suite struct OutboxSendLockTests {
    /// While `withSendLocks` runs its body, its targets' locks (in their namespace, ids folded into 31 bits) are held
    /// shared: another sender gets them too, an exclusive taker does not, and other namespaces and ids are free.
    /// They are released when the body returns and when it throws.
    @Test func sendLocksAreSharedWhileTheBodyRunsAndReleasedAfterIt() async throws {
        try await StoreFixture.with("outbox_send_locks") { fixture in
            let outbox = fixture.outbox()
            let folded = Int64(Int32.max) + 7
            #expect(SendLocks.key(folded) == 7)
            try await fixture.client.withConnection { sender in
                try await outbox.withSendLocks(SendLocks.activityNamespace, [42, folded], on: sender) { () async throws in
                    #expect(try await Self.canLock(SendLocks.activityNamespace, 42, exclusively: false, fixture))
                    #expect(try await Self.canLock(SendLocks.activityNamespace, 42, exclusively: true, fixture) == false)
                    #expect(try await Self.canLock(SendLocks.activityNamespace, 7, exclusively: true, fixture) == false)
                    #expect(try await Self.canLock(SendLocks.feedNamespace, 42, exclusively: true, fixture))
                    #expect(try await Self.canLock(SendLocks.activityNamespace, 43, exclusively: true, fixture))
                }
                #expect(try await Self.canLock(SendLocks.activityNamespace, 42, exclusively: true, fixture))
                #expect(try await Self.canLock(SendLocks.activityNamespace, 7, exclusively: true, fixture))

                struct SendFailed: Error {}
                await #expect(throws: SendFailed.self) {
                    try await outbox.withSendLocks(SendLocks.feedNamespace, [42], on: sender) {
                        #expect(try await Self.canLock(SendLocks.feedNamespace, 42, exclusively: true, fixture) == false)
                        throw SendFailed()
                    }
                }
                #expect(try await Self.canLock(SendLocks.feedNamespace, 42, exclusively: true, fixture))
                #expect(try await Self.advisoryLocks(heldBy: sender, fixture) == 0)
            }
        }
    }

    /// A token rotation (``Activities/register(_:device:)`` with a new token) waits for a send holding the
    /// activity's lock: the old token stays the live one until the send is done, then the rotation commits.
    @Test func aTokenRotationWaitsForASendHoldingTheActivitysLock() async throws {
        try await StoreFixture.with("outbox_send_lock_rotation") { fixture in
            let activityID = try await fixture.makeActivity("order-1", token: "ab01")
            let outbox = fixture.outbox()
            let rotated = Flag()
            let rotation = try await fixture.client.withConnection { sender in
                try await outbox.withSendLocks(SendLocks.activityNamespace, [activityID], on: sender) {
                    let rotation = Task {
                        defer { rotated.value.store(true, ordering: .sequentiallyConsistent) }
                        return try await Activities(client: fixture.client, logger: fixture.logger).register(
                            .init(appID: fixture.appID, activityKey: "order-1", attributesType: "OrderAttributes", pushToken: "ab02")
                        )
                    }
                    // Waits (asking every 10 ms) until the rotation waits for the lock, or has gone past it.
                    let deadline = ContinuousClock.now + .seconds(30)
                    var waiting = false
                    while !waiting, !rotated.value.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(10))
                        waiting = try await Self.waitsForLock(SendLocks.activityNamespace, activityID, fixture)
                    }
                    #expect(waiting && !rotated.value.load(ordering: .sequentiallyConsistent), "the rotation did not wait for the send")
                    #expect(try await Self.liveTokens(activityID, fixture) == ["ab01"])
                    return rotation
                }
            }
            #expect(try await rotation.value == .tokenRotated)
            #expect(try await Self.liveTokens(activityID, fixture) == ["ab02"])
        }
    }

    /// Whether another connection could take the lock `(namespace, id)` now (taken and released in one statement).
    private static func canLock(_ namespace: Int32, _ id: Int64, exclusively: Bool, _ fixture: StoreFixture) async throws -> Bool {
        let function = exclusively ? "pg_try_advisory_xact_lock" : "pg_try_advisory_xact_lock_shared"
        let rows = try await fixture.client.query("SELECT \(unescaped: function)(\(namespace), \(SendLocks.key(id)))")
        for try await taken in rows.decode(Bool.self) { return taken }
        return false
    }

    /// Whether some session waits for the lock `(namespace, id)`.
    private static func waitsForLock(_ namespace: Int32, _ id: Int64, _ fixture: StoreFixture) async throws -> Bool {
        let rows = try await fixture.client.query(
            """
            SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                             AND classid = \(namespace)::oid AND objid = \(SendLocks.key(id))::oid AND objsubid = 2)
            """
        )
        for try await waits in rows.decode(Bool.self) { return waits }
        return false
    }

    /// How many advisory locks the session of `connection` holds.
    private static func advisoryLocks(heldBy connection: PostgresConnection, _ fixture: StoreFixture) async throws -> Int {
        let rows = try await connection.query(
            "SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
            logger: fixture.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return -1
    }

    /// The activity's live update tokens.
    private static func liveTokens(_ activityID: Int64, _ fixture: StoreFixture) async throws -> [String] {
        let rows = try await fixture.client.query(
            "SELECT token FROM activity_tokens WHERE activity_id = \(activityID) AND invalidated_at IS NULL ORDER BY id"
        )
        return try await rows.decode(String.self).reduce(into: []) { $0.append($1) }
    }

    /// Whether something has happened, as concurrent tasks tell each other.
    private final class Flag: Sendable {
        let value = Atomic(false)
    }
}
