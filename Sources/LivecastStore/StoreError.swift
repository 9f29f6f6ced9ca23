import PostgresNIO

/// Why the store refused a request: machine-readable codes the HTTP API maps to statuses.
package struct StoreError: Error, Hashable, CustomStringConvertible {
    /// A code; new ones may be added.
    package struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { self.rawValue }

        /// The thing asked for does not exist (or belongs to another app).
        package static let notFound = Code(rawValue: "not_found")
        /// The request collides with existing data, such as a token another device holds.
        package static let conflict = Code(rawValue: "conflict")
        /// A value is malformed.
        package static let invalid = Code(rawValue: "invalid")
        /// A limit is reached, such as APNs' 10,000 channels per app.
        package static let limitReached = Code(rawValue: "limit_reached")
        /// An update's timestamp is older than the last one accepted for its target.
        package static let staleTimestamp = Code(rawValue: "stale_timestamp")
        /// The activity or feed has ended: nothing more is sent to it.
        package static let activityEnded = Code(rawValue: "activity_ended")
        /// The feed has ended: it takes no more starts or updates.
        package static let feedEnded = Code(rawValue: "feed_ended")
        /// The channel is retired (or gone at APNs): nothing is sent to it again.
        package static let channelRetired = Code(rawValue: "channel_retired")
        /// The payload would exceed APNs' size limit.
        package static let payloadTooLarge = Code(rawValue: "payload_too_large")
        /// An idempotency key sent again to the same route and target with another body.
        package static let idempotencyKeyReused = Code(rawValue: "idempotency_key_reused")
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
