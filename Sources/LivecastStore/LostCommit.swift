import Logging
import PostgresNIO

/// What became of a transaction whose connection was lost after its work was done, while its `COMMIT` was on the
/// way or being made durable: PostgreSQL is asked by the transaction's id (`pg_xact_status`), on another
/// connection, so that a commit whose answer never arrived is told from one that never happened.
enum LostCommit {
    /// What PostgreSQL said of the transaction.
    enum Outcome: Equatable {
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

    /// Asks PostgreSQL, a few times apart, what became of transaction `transactionID` (`pg_current_xact_id()`).
    static func outcome(of transactionID: Int64, client: PostgresClient, logger: Logger) async -> Outcome {
        for pause in Self.pauses {
            guard (try? await Task.sleep(for: pause)) != nil else { return .unknown }
            do {
                switch try await Self.status(of: transactionID, client: client, logger: logger) {
                case "committed": return .committed
                case "aborted": return .aborted
                case "in progress": continue
                default: return .unknown  // too old for PostgreSQL to know
                }
            } catch  where StoreError.isConnectionLoss(error) {
                continue
            } catch {
                logger.warning("could not ask PostgreSQL what became of a commit", metadata: ["error": "\(error)"])
                return .unknown
            }
        }
        return .unknown
    }

    /// `pg_xact_status`: `committed`, `aborted`, `in progress`, or `nil`.
    private static func status(of transactionID: Int64, client: PostgresClient, logger: Logger) async throws -> String? {
        let rows = try await client.guardedQuery("SELECT pg_xact_status(\(transactionID)::text::xid8)", logger: logger)
        for try await status in rows.decode(String?.self) { return status }
        return nil
    }
}
