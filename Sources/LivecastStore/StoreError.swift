import PostgresNIO

/// Why the store refused a request: machine-readable codes the HTTP API maps to statuses.
public struct StoreError: Error, Hashable, CustomStringConvertible {
    /// A code; new ones may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { self.rawValue }

        /// The thing asked for does not exist (or belongs to another app).
        public static let notFound = Code(rawValue: "not_found")
        /// The request collides with existing data, such as a token another device holds.
        public static let conflict = Code(rawValue: "conflict")
        /// A value is malformed.
        public static let invalid = Code(rawValue: "invalid")
        /// A limit is reached, such as APNs' 10,000 channels per app.
        public static let limitReached = Code(rawValue: "limit_reached")
        /// An update's timestamp is older than the last one accepted for its target.
        public static let staleTimestamp = Code(rawValue: "stale_timestamp")
        /// The activity or feed has ended: nothing more is sent to it.
        public static let activityEnded = Code(rawValue: "activity_ended")
        /// The feed has ended: it takes no more starts or updates.
        public static let feedEnded = Code(rawValue: "feed_ended")
        /// The channel is retired (or gone at APNs): nothing is sent to it again.
        public static let channelRetired = Code(rawValue: "channel_retired")
        /// The payload would exceed APNs' size limit.
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
        /// An idempotency key sent again to the same route and target with another body.
        public static let idempotencyKeyReused = Code(rawValue: "idempotency_key_reused")
    }

    /// What is wrong.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The field at fault, when one is.
    public let field: String?

    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(self.code): \(self.message)" }

    /// SQLSTATE 23505: a unique constraint refused a row.
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
            || ((error as? PostgresTransactionError)?.closureError).map(Self.isUniqueViolation) == true
    }
}
