import Logging
import PostgresNIO

/// How ``UpdateAcceptance``'s rules read, supersede and write the targets of one kind: one target at a time
/// (``SingleTargetWrites``), or many standalone activities in a few statements (``ActivityBatchWrites``).
protocol AcceptanceWrites: Sendable {
    /// The kind of target its requests name (``UpdateRequest``).
    associatedtype Kind
    associatedtype Target: UpdateTarget

    /// Reads and locks the targets of `requests`, and reads the database's clock
    /// (``OutboxStatements/databaseNow(on:logger:)``).
    /// - Returns: Each request's target, or why it takes no update, by the index of its request; and the database's
    ///   time in UNIX seconds, when a target was found.
    func lock(_ requests: IndexedRequests<Kind>, on connection: PostgresConnection, logger: Logger) async throws -> LockedTargets<Target>

    /// Supersedes the pending updates of `targets` that no dispatcher has begun.
    /// - Returns: The timestamps of the updates superseded, by the id of their target.
    func supersedePending(_ targets: [Target], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: Set<Int>]

    /// Writes the admitted updates' outbox rows (with their answers, for those with an idempotency key) and their
    /// targets' new state.
    /// - Returns: What each request is told, by the index of its request, and the transaction's id when the caller
    ///   needs it to look up a lost commit (``LostCommit``).
    func insert(_ admitted: [AdmittedUpdate<Target>], on connection: PostgresConnection, logger: Logger) async throws -> InsertedUpdates
}

/// A round's requests, each with its index among them.
typealias IndexedRequests<Kind> = [(index: Int, request: UpdateRequest<Kind>)]
/// What ``AcceptanceWrites/lock(_:on:logger:)`` answers: the targets found, and the database's clock.
typealias LockedTargets<Target> = (targets: [(index: Int, target: Result<Target, any Error>)], now: Int?)
/// What ``AcceptanceWrites/insert(_:on:logger:)`` answers: the accepted updates, and the transaction's id.
typealias InsertedUpdates = (accepted: [Int: AcceptedUpdate], transactionID: Int64?)

/// One target, read and locked by a query of its own (a feed, an activity, a follower ended alone), its row
/// written by ``OutboxRow/insert(dismissalDateClamped:on:logger:)``.
struct SingleTargetWrites<Kind, Target: UpdateTarget>: AcceptanceWrites {
    /// Reads and locks the target, throwing ``StoreError``s for one that takes no updates.
    let lockTarget: @Sendable (PostgresConnection) async throws -> Target

    func lock(_ requests: IndexedRequests<Kind>, on connection: PostgresConnection, logger: Logger) async throws -> LockedTargets<Target> {
        guard let index = requests.first?.index else { return ([], nil) }
        do {
            let target = try await self.lockTarget(connection)
            return ([(index, .success(target))], try await OutboxStatements.databaseNow(on: connection, logger: logger))
        } catch {
            return ([(index, .failure(error))], nil)
        }
    }

    func supersedePending(_ targets: [Target], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: Set<Int>] {
        var superseded: [Int64: Set<Int>] = [:]
        for target in targets { superseded[target.id] = Set(try await target.supersedePending(on: connection, logger: logger)) }
        return superseded
    }

    func insert(_ admitted: [AdmittedUpdate<Target>], on connection: PostgresConnection, logger: Logger) async throws -> InsertedUpdates {
        var accepted: [Int: AcceptedUpdate] = [:]
        for update in admitted {
            accepted[update.index] = try await update.row.insert(dismissalDateClamped: update.dismissalDateClamped, on: connection, logger: logger)
            try await update.target.recordAccepted(update.row.content, on: connection, logger: logger)
        }
        return (accepted, nil)
    }
}
