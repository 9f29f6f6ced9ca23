import LivecastCore
import Logging
import PostgresNIO

/// The one way an update or end of a feed or an activity enters the outbox: one ordered list of rules, which a
/// single request (``accept(_:client:logger:lock:)``) and a group commit of standalone activities'
/// (``ActivityUpdateBatch``) both run, in a transaction (docs/ARCHITECTURE.md, invariants 1, 2, 4 and 7). A rule added
/// here applies to both; what differs is only how the targets are read and written (``AcceptanceWrites``).
enum UpdateAcceptance {
    /// A round's answers, in the requests' order, and its transaction's id when it wrote an update.
    struct Answers: Sendable {
        var results: [Result<AcceptedUpdate, any Error>]
        var transactionID: Int64?
    }

    /// Accepts one request for the target that `lock` reads and locks, in a transaction of its own.
    /// - Parameters:
    ///   - lock: Reads and locks the target, throwing ``StoreError``s for one that takes no updates.
    /// - Throws: ``StoreError``: `invalid` for a bad priority or payload rule; `staleTimestamp`; `payloadTooLarge`;
    ///   whatever `lock` throws. Nothing is written when it throws.
    static func accept<Kind, Target: UpdateTarget>(
        _ request: UpdateRequest<Kind>,
        client: PostgresClient,
        logger: Logger,
        lock: @escaping @Sendable (PostgresConnection) async throws -> Target
    ) async throws -> AcceptedUpdate {
        try await OutboxStatements.transaction(client, logger: logger, ifCommitLost: LostCommit.keptUpdate(client: client, logger: logger)) {
            connection in
            try await Self.accept(request, on: connection, logger: logger, lock: lock)
        }
    }

    /// Accepts one request for the target that `lock` reads and locks, in the caller's transaction: what
    /// ``accept(_:client:logger:lock:)`` runs in a transaction of its own.
    /// - Throws: what that throws. Nothing is written when it throws, if the caller's transaction is undone.
    static func accept<Kind, Target: UpdateTarget>(
        _ request: UpdateRequest<Kind>,
        on connection: PostgresConnection,
        logger: Logger,
        lock: @escaping @Sendable (PostgresConnection) async throws -> Target
    ) async throws -> AcceptedUpdate {
        try await Self.apply([request], writes: SingleTargetWrites(lockTarget: lock), on: connection, logger: logger).results[0].get()
    }

    /// Applies the rules to `requests` (to distinct targets) in the caller's transaction, in this order:
    /// 1. the priority: 5 or 10 (``OutboxRules/priority(requested:hasAlert:)``);
    /// 2. a retried request is answered as the first time (``OutboxStatements/replays(_:on:logger:)``);
    /// 3. each target is read and locked, and the database's clock read (``AcceptanceWrites/lock(_:on:logger:)``);
    /// 4. the timestamp comes after the target's last (``OutboxRules/timestamp(requested:last:now:)``), and the payload
    ///    passes ActivityKit's rules at it (``UpdateTarget/payload(for:at:)``);
    /// 5. an update in the same second as one still waiting takes its place and its timestamp (latest wins), so a busy
    ///    target gets one update a second and its timestamps never run ahead of the clock;
    /// 6. the hourly priority-10 budget is spent, in the requests' order;
    /// 7. the outbox rows, their kept answers and the targets' new state are written.
    /// A request refused by a rule gets its error and writes nothing; the others go on.
    static func apply<Writes: AcceptanceWrites>(
        _ requests: [UpdateRequest<Writes.Kind>],
        writes: Writes,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Answers {
        var answers = [Result<AcceptedUpdate, any Error>?](repeating: nil, count: requests.count)
        var priorities: [Int: Int] = [:]
        for (index, request) in requests.enumerated() {
            do {
                priorities[index] = try OutboxRules.priority(requested: request.content.priority, hasAlert: request.content.alert != nil)
            } catch {
                answers[index] = .failure(error)
            }
        }
        let keyed = priorities.keys.sorted().compactMap { index in requests[index].content.idempotencyKey.map { (index, $0) } }
        let replays = try await OutboxStatements.replays(keyed.map { (requests[$0.0].appID, $0.1) }, on: connection, logger: logger)
        for (position, replay) in replays { answers[keyed[position].0] = replay }
        let open = requests.indices.filter { answers[$0] == nil }
        let (targets, clock) = try await writes.lock(open.map { (index: $0, request: requests[$0]) }, on: connection, logger: logger)
        var admitted: [AdmittedUpdate<Writes.Target>] = []
        for (index, locked) in targets {
            do {
                let target = try locked.get()
                // A target found comes with the clock, and an open request with its priority.
                guard let now = clock, let priority = priorities[index] else { continue }
                let request = requests[index]
                admitted.append(try AdmittedUpdate(request.content, appID: request.appID, priority: priority, index: index, target: target, now: now))
            } catch {
                answers[index] = .failure(error)
            }
        }
        try await Self.replacePending(&admitted, writes: writes, on: connection, logger: logger)
        try await Self.spendPriorityBudgets(&admitted, on: connection, logger: logger)
        let (accepted, transactionID) = try await writes.insert(admitted, on: connection, logger: logger)
        for (index, update) in accepted { answers[index] = .success(update) }
        return Answers(results: answers.map { $0 ?? .failure(StoreError(.conflict, "not written; retry")) }, transactionID: transactionID)
    }

    /// Supersedes the pending updates of the targets whose update came in the same second as their last: an update
    /// that replaces its target's waiting one takes that one's timestamp.
    private static func replacePending<Writes: AcceptanceWrites>(
        _ admitted: inout [AdmittedUpdate<Writes.Target>],
        writes: Writes,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let coalesced = admitted.filter { $0.row.coalesced && $0.target.lastTimestamp != nil }.map(\.target)
        guard !coalesced.isEmpty else { return }
        let replaced = try await writes.supersedePending(coalesced, on: connection, logger: logger)
        for position in admitted.indices {
            let update = admitted[position]
            guard update.row.coalesced, let last = update.target.lastTimestamp, replaced[update.target.id]?.contains(last) == true else { continue }
            // An earlier timestamp passes every check the later one passed; should one fail, the transaction is undone.
            try admitted[position].encode(timestamp: last)
        }
    }

    /// Spends each app's hourly priority-10 budget once for all of its updates that ask for priority 10: the first
    /// of them, in the requests' order, go out at 10 while the budget lasts, the rest at 5, as if each had spent
    /// one unit in turn (``OutboxStatements/spendPriorityBudget(_:appID:on:logger:)``). Apps in the order of their ids, so
    /// that two transactions lock their counts in the same order.
    private static func spendPriorityBudgets<Target: UpdateTarget>(
        _ admitted: inout [AdmittedUpdate<Target>],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let asking = admitted.indices.filter { admitted[$0].row.requestedPriority == 10 }
        for (appID, positions) in Dictionary(grouping: asking, by: { admitted[$0].row.appID }).sorted(by: { $0.key < $1.key }) {
            let granted = try await OutboxStatements.spendPriorityBudget(positions.count, appID: appID, on: connection, logger: logger)
            for (order, position) in positions.enumerated() where order >= granted {
                admitted[position].row.sentPriority = 5
            }
        }
    }
}
