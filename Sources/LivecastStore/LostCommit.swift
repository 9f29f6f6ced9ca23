import Logging
import PostgresNIO

/// A request's connection was lost while PostgreSQL committed its work, and PostgreSQL could not say afterwards
/// whether the commit was made (``LostCommit``): what it wrote may be kept.
package struct CommitInDoubt: Error, Sendable {}

/// What became of a transaction whose connection was lost after its work was done, while its `COMMIT` was on the
/// way or being made durable: PostgreSQL is asked on another connection, so that a commit whose answer never
/// arrived is told from one that never happened.
enum LostCommit {
    /// What PostgreSQL said of the transaction.
    private enum Outcome {
        /// It committed: what it wrote is kept.
        case committed
        /// It was rolled back, or its server crashed before the commit was durable: nothing it wrote is kept.
        case aborted
        /// PostgreSQL did not answer, or the transaction was still in progress, after every try.
        case unknown
    }

    /// How long to wait before each question: PostgreSQL may be restarting, and the transaction's backend may not have
    /// seen its client go yet (`in progress`). About seven seconds in all, within a request's database wait.
    static let pauses: [Duration] = [.milliseconds(50), .milliseconds(250), .seconds(1), .seconds(2), .seconds(4)]

    /// `answer`, when transaction `transactionID` (`pg_current_xact_id()`) committed, by `pg_xact_status`: for a
    /// writer that writes again what was not kept, and so must not take a transaction still in progress for a failed
    /// one.
    /// - Throws: `loss` when the transaction was undone; ``CommitInDoubt`` when PostgreSQL cannot tell.
    static func committed<Answer>(
        _ answer: Answer,
        transactionID: Int64,
        lostWith loss: any Error,
        client: PostgresClient,
        logger: Logger
    ) async throws -> Answer {
        switch await Self.outcome(of: transactionID, client: client, logger: logger) {
        case .committed: return answer
        case .aborted: throw loss
        case .unknown: throw CommitInDoubt()
        }
    }

    /// What to answer for one update whose transaction's commit was lost
    /// (``OutboxStatements/transaction(_:logger:file:line:ifCommitLost:_:)``): the update, when the outbox holds it (a
    /// transaction still in progress reads as not kept, so the writer must not write it again); the loss when it does
    /// not; ``CommitInDoubt`` when PostgreSQL does not answer. A replay wrote nothing, and is answered as it is.
    static func keptUpdate(client: PostgresClient, logger: Logger) -> @Sendable (AcceptedUpdate, any Error) async throws -> AcceptedUpdate {
        { accepted, loss in
            if accepted.isReplay { return accepted }
            let query: PostgresQuery = "SELECT EXISTS (SELECT 1 FROM updates WHERE id = \(accepted.updateID))"
            switch await Self.ask(query, client: client, logger: logger, decide: { (kept: Bool) in kept }) {
            case true?: return accepted
            case false?: throw loss
            case nil: throw CommitInDoubt()
            }
        }
    }

    private static func outcome(of transactionID: Int64, client: PostgresClient, logger: Logger) async -> Outcome {
        await Self.ask("SELECT pg_xact_status(\(transactionID)::text::xid8)", client: client, logger: logger) { (status: String?) in
            switch status {
            case "committed": .committed
            case "aborted": .aborted
            case "in progress": nil  // ask again
            default: .unknown  // too old for PostgreSQL to know
            }
        } ?? .unknown
    }

    /// Runs `query` (one row, one column) after each pause until `decide` makes something of its answer.
    /// - Returns: What `decide` made of it; `nil` when PostgreSQL never answered, or answered what `decide` left open.
    private static func ask<Answer: PostgresDecodable & Sendable, Decision>(
        _ query: PostgresQuery,
        client: PostgresClient,
        logger: Logger,
        decide: (Answer) -> Decision?
    ) async -> Decision? {
        for pause in Self.pauses {
            guard (try? await Task.sleep(for: pause)) != nil else { return nil }
            do {
                for try await answer in try await client.guardedQuery(query, logger: logger).decode(Answer.self) {
                    if let decision = decide(answer) { return decision }
                }
            } catch  where StoreError.isConnectionLoss(error) {
                continue
            } catch {
                logger.warning("could not ask PostgreSQL what became of a commit", metadata: ["error": "\(error)"])
                return nil
            }
        }
        return nil
    }
}
