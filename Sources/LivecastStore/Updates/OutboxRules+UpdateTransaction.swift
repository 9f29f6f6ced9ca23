import Logging
import PostgresNIO
import Synchronization

extension OutboxRules {
    /// ``transaction(_:logger:file:line:_:)`` for a body that writes one update, or replays one. Should the
    /// connection be lost once the body has finished (the `COMMIT` on its way, or being made durable), PostgreSQL is
    /// asked whether the update was kept (``LostCommit/isKept(updateID:client:logger:)``): if it was, it is answered
    /// as accepted; if not, with the loss; if PostgreSQL does not answer, with ``CommitInDoubt``.
    static func updateTransaction(
        _ client: PostgresClient,
        logger: Logger,
        file: String = #fileID,
        line: Int = #line,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> AcceptedUpdate
    ) async throws -> AcceptedUpdate {
        let written = Mutex<AcceptedUpdate?>(nil)
        do {
            return try await Self.transaction(client, logger: logger, file: file, line: line) { connection in
                let accepted = try await body(connection)
                written.withLock { $0 = accepted }
                return accepted
            }
        } catch  where StoreError.isConnectionLoss(error) {
            guard let accepted = written.withLock({ $0 }) else { throw error }
            if accepted.isReplay { return accepted }  // it wrote nothing
            switch await LostCommit.isKept(updateID: accepted.updateID, client: client, logger: logger) {
            case true: return accepted
            case false: throw error
            case nil: throw CommitInDoubt()
            }
        }
    }
}
