import PostgresNIO

/// Why the store refused a request: machine-readable codes the HTTP API maps to statuses.
package struct StoreError: Error, Hashable, CustomStringConvertible {
    /// A code. The HTTP API maps every one to a status in one exhaustive switch, so a new code cannot go unmapped.
    package enum Code: String, Sendable, CustomStringConvertible {
        /// The thing asked for does not exist (or belongs to another app).
        case notFound = "not_found"
        /// The request collides with existing data, such as a token another device holds.
        case conflict
        /// A value is malformed.
        case invalid
        /// A limit is reached, such as APNs' 10,000 channels per app.
        case limitReached = "limit_reached"
        /// A device holds as many live push-to-start tokens, or running activities, as one registered by the device's
        /// own key (a client key) may: it must end or unregister some first.
        case deviceLimitReached = "device_limit_reached"
        /// An update's timestamp is older than the last one accepted for its target.
        case staleTimestamp = "stale_timestamp"
        /// The activity or feed has ended: nothing more is sent to it.
        case activityEnded = "activity_ended"
        /// The feed has ended: it takes no more starts or updates.
        case feedEnded = "feed_ended"
        /// The channel is retired (or gone at APNs): nothing is sent to it again.
        case channelRetired = "channel_retired"
        /// The payload would exceed APNs' size limit.
        case payloadTooLarge = "payload_too_large"
        /// An idempotency key sent again to the same route and target with another body.
        case idempotencyKeyReused = "idempotency_key_reused"

        package var description: String { self.rawValue }
    }

    /// What is wrong.
    package let code: Code
    /// A sentence for people.
    package let message: String
    /// The field at fault, when one is.
    package let field: String?

    package init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    package var description: String { "\(self.code): \(self.message)" }

    /// SQLSTATE 23505: a unique constraint refused a row.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
            || ((error as? PostgresTransactionError)?.closureError).map(Self.isUniqueViolation) == true
    }
}
