package import Foundation
package import Logging
package import PostgresNIO

/// The outbox as a dispatcher works it: every statement a dispatcher runs on `updates`, `owed_pushes`,
/// `dead_letters`, `deliveries` and the rows it reads to send (followers, audiences, channels), named for what it
/// does. Claims are made under a lease in this dispatcher's name (``claimer``) and renewed by its heartbeat
/// (``renew(updates:slices:owedPushes:)``); a checkpoint or release of a claim another dispatcher took over is refused.
///
/// What to send and when (the retry backoff, the invalidation guard, which lane claims what) is the service's policy;
/// this type only reads and writes.
package struct Outbox: Sendable {
    /// The dispatcher whose name claims carry.
    package let claimer: UUID
    /// How long a claim holds without a heartbeat.
    package let lease: Duration
    /// When a push APNs keeps asking to retry is given up.
    package let retryDeadline: RetryDeadline
    let database: PostgresClient
    let logger: Logger

    /// - Parameters:
    ///   - claimer: The dispatcher whose name claims carry.
    ///   - lease: How long a claim holds without a heartbeat.
    ///   - retryDeadline: How long a push APNs asks to retry later is tried again.
    package init(database: PostgresClient, claimer: UUID, lease: Duration, retryDeadline: RetryDeadline, logger: Logger) {
        self.database = database
        self.claimer = claimer
        self.lease = lease
        self.retryDeadline = retryDeadline
        self.logger = logger
    }
}
