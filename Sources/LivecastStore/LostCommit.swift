import Logging
import PostgresNIO

/// A request's connection was lost while PostgreSQL committed its work, and PostgreSQL could not say afterwards
/// whether the commit was made (``LostCommit``): what it wrote may be kept.
public struct CommitInDoubt: Error, Sendable {}

/// What became of a transaction whose connection was lost after its work was done, while its `COMMIT` was on the
/// way or being made durable: PostgreSQL is asked on another connection, so that a commit whose answer never
/// arrived is told from one that never happened.
enum LostCommit {
    /// What PostgreSQL said of the transaction.
    enum Outcome {
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

    /// What became of transaction `transactionID` (`pg_current_xact_id()`), by `pg_xact_status`: for a writer that
    /// writes again what was not kept, and so must not take a transaction still in progress for a failed one.
    static func outcome(of transactionID: Int64, client: PostgresClient, logger: Logger) async -> Outcome {
        await Self.ask("SELECT pg_xact_status(\(transactionID)::text::xid8)", client: client, logger: logger) { (status: String?) in
            switch status {
            case "committed": .committed
            case "aborted": .aborted
            case "in progress": nil  // ask again
            default: .unknown  // too old for PostgreSQL to know
            }
        } ?? .unknown
    }

    /// Whether the outbox holds update `updateID`, which the lost transaction wrote, or `nil` when PostgreSQL did not
    /// answer: for a writer that does not write again (a transaction still in progress reads as not kept).
    static func isKept(updateID: Int64, client: PostgresClient, logger: Logger) async -> Bool? {
        await Self.ask("SELECT EXISTS (SELECT 1 FROM updates WHERE id = \(updateID))", client: client, logger: logger) { (kept: Bool) in
            kept
        }
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
