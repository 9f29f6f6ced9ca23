import Logging
import PostgresNIO

/// Accepts many standalone activities' updates and ends in one transaction of a few statements
/// (``ActivityBatchWrites``), through the same list of rules as one request (``UpdateAcceptance``).
///
/// An activity appears at most once in a transaction; a second update of it goes in the next, after the first is
/// committed. A request the rules refuse gets its own error and writes nothing. When a transaction fails as a whole
/// (a lost connection, a deadlock, a key another transaction stored meanwhile), each of its requests is answered ``WriteAlone``, for its caller to try it again
/// alone (``ActivityUpdates/accept(_:)``).
enum ActivityUpdateBatch {
    /// Accepts `requests` (none a start), answering each in order.
    static func write(_ requests: [ActivityUpdates.Request], client: PostgresClient, logger: Logger) async -> [Result<AcceptedUpdate, any Error>] {
        var results = [Result<AcceptedUpdate, any Error>?](repeating: nil, count: requests.count)
        var remaining = Array(requests.indices)
        while !remaining.isEmpty {
            var activities = Set<ActivityName>()
            let (round, later) = remaining.reduce(into: ([Int](), [Int]())) { split, index in
                if activities.insert(ActivityName(requests[index])).inserted { split.0.append(index) } else { split.1.append(index) }
            }
            let answers = await Self.writeRound(round.map { requests[$0] }, client: client, logger: logger)
            for (index, answer) in zip(round, answers) { results[index] = answer }
            remaining = later
        }
        return results.map { $0 ?? .failure(StoreError(.conflict, "not written; retry")) }
    }

    /// An app's activity, named as a request names it.
    private struct ActivityName: Hashable {
        var appID: Int64
        var activityKey: String

        init(_ request: ActivityUpdates.Request) {
            self.appID = request.appID
            self.activityKey = request.targetKey
        }
    }

    /// One transaction for requests to distinct activities. When it fails as a whole (a lost connection, a
    /// deadlock), each request is answered ``WriteAlone``. When the connection is lost after the work was done (the
    /// `COMMIT` on its way, or being made durable), PostgreSQL is asked whether the transaction committed
    /// (``LostCommit``): if it did, its answers stand, as writing the updates again would send them twice; if nobody
    /// can tell, each request is answered ``CommitInDoubt``.
    private static func writeRound(
        _ requests: [ActivityUpdates.Request],
        client: PostgresClient,
        logger: Logger
    ) async -> [Result<AcceptedUpdate, any Error>] {
        do {
            let answers: UpdateAcceptance.Answers = try await OutboxStatements.transaction(
                client,
                logger: logger,
                ifCommitLost: { answers, loss in
                    guard let transactionID = answers.transactionID else { return answers }  // it wrote nothing
                    return try await LostCommit.committed(answers, transactionID: transactionID, lostWith: loss, client: client, logger: logger)
                }
            ) { connection in
                try await UpdateAcceptance.apply(requests, writes: ActivityBatchWrites(), on: connection, logger: logger)
            }
            return answers.results
        } catch is CommitInDoubt {
            return requests.map { _ in .failure(CommitInDoubt()) }
        } catch {
            return requests.map { _ in .failure(WriteAlone(cause: error)) }
        }
    }

    /// A shared transaction failed as a whole and kept nothing: the request is to be written again alone, in its
    /// caller's task (``ActivityUpdateQueue``), so that a caller that has given up (its task cancelled: the request
    /// was already answered 503) writes nothing.
    struct WriteAlone: Error {
        /// Why the shared transaction failed.
        var cause: any Error
    }
}
