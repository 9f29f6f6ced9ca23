import Logging
import PostgresNIO

/// Listens on a PostgreSQL notification channel until cancelled, handing each notification's payload to `receive`.
/// When the `LISTEN` connection is lost (PostgreSQL restarted, say), it logs it, waits `retryAfter`, and listens again;
/// the workers it wakes poll meanwhile.
/// - Parameter what: What the channel announces, for the log (`outbox`, `webhook`).
func listenForNotifications(
    on channel: String,
    database: PostgresClient,
    retryAfter: Duration,
    logger: Logger,
    what: String,
    _ receive: @escaping @Sendable (String) -> Void
) async {
    while !Task.isCancelled {
        do {
            try await database.withConnection { connection in
                try await connection.listen(on: channel) { notifications in
                    for try await notification in notifications { receive(notification.payload) }
                }
            }
        } catch {
            guard !Task.isCancelled else { return }
            logger.warning("lost the \(what) LISTEN connection; polling until it is back", metadata: ["error": "\(error)"])
        }
        try? await Task.sleep(for: retryAfter)
    }
}
