/// Why a Live Activity payload cannot be sent. Names the offending field in APNs' spelling (`stale-date`).
public struct PayloadValidationError: Error, Hashable, CustomStringConvertible {
    /// A machine-readable error code; new codes may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { self.rawValue }

        /// A field the event requires is absent.
        public static let missingField = Code(rawValue: "missing_field")
        /// Two fields that exclude each other are both present.
        public static let conflictingFields = Code(rawValue: "conflicting_fields")
        /// A field is present on an event that does not allow it.
        public static let fieldNotAllowed = Code(rawValue: "field_not_allowed")
        /// A field has a value outside its allowed range or shape.
        public static let invalidValue = Code(rawValue: "invalid_value")
        /// The encoded payload exceeds the destination's limit.
        public static let payloadTooLarge = Code(rawValue: "payload_too_large")
    }

    /// What is wrong.
    public let code: Code
    /// The field at fault, in APNs' spelling, when one field is.
    public let field: String?
    /// A sentence for people.
    public let message: String
    /// For ``Code/payloadTooLarge``: the measured size in bytes.
    public let size: Int?
    /// For ``Code/payloadTooLarge``: the limit in bytes.
    public let limit: Int?

    init(_ code: Code, field: String?, _ message: String, size: Int? = nil, limit: Int? = nil) {
        self.code = code
        self.field = field
        self.message = message
        self.size = size
        self.limit = limit
    }

    public var description: String { "\(self.code): \(self.message)" }
}
