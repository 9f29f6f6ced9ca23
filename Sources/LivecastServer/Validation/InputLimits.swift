import LivecastCore

/// The bounds the API puts on what it takes, so that hostile or absurd input gets a `422 invalid` naming the field
/// instead of a database error: PostgreSQL's `text` holds no NUL, its `integer` is 32 bits, and a btree index entry
/// holds about 2,700 bytes. The OpenAPI document and docs/API.md state the same limits.
enum InputLimits {
    /// Bundle ids (`com.example.game`): at most 255 bytes.
    static let bundleIDBytes = 255
    /// Feed keys, device ids, activity ids, user ids, channel ids and attributes type names: at most 128 bytes.
    static let identifierBytes = 128
    /// OS versions (`18.2.1`): at most 32 bytes.
    static let osVersionBytes = 32
    /// Identity assertions (a compact ES256 JWT, ``IdentityAssertions``): at most 4,096 bytes.
    static let assertionBytes = 4096
    /// `Idempotency-Key`: 1 to 200 bytes.
    static let idempotencyKeyBytes = 200
    /// An activity lives at most 8 hours, so a feed's `staleAfterSeconds` is 1 s to 8 h.
    static let staleAfterSeconds = 1...(8 * 3600)
    /// A feed's `staleGraceSeconds` is 0 to 8 h.
    static let staleGraceSeconds = 0...(8 * 3600)
    /// A feed's `renewal.ifUpdatedWithin` is 1 s to 7 days.
    static let renewalIfUpdatedWithin = 1...(7 * 86400)

    /// Checks an identifier: at most `maximumBytes` UTF-8 bytes and no control character (U+0000 to U+001F, U+007F).
    /// - Throws: ``APIError`` `422 invalid` naming `field`.
    static func checkIdentifier(_ value: String?, field: String, maximumBytes: Int = Self.identifierBytes) throws {
        guard let value else { return }
        guard value.utf8.count <= maximumBytes else {
            throw APIError.invalid("\(field) is \(value.utf8.count) bytes; the limit is \(maximumBytes)", field: field)
        }
        guard !Self.holdsControlCharacter(value) else {
            throw APIError.invalid("\(field) must not hold control characters (U+0000 to U+001F, U+007F)", field: field)
        }
    }

    /// Checks an identifier that names a row, as a path parameter does in a single request: not empty, and
    /// ``checkIdentifier(_:field:maximumBytes:)``'s limits.
    /// - Throws: ``APIError`` `422 invalid` naming `field`.
    static func checkRequiredIdentifier(_ value: String, field: String) throws {
        guard !value.isEmpty else { throw APIError.invalid("\(field) must not be empty", field: field) }
        try Self.checkIdentifier(value, field: field)
    }

    /// Checks each identifier of a list, naming the list as the field.
    static func checkIdentifiers(_ values: [String]?, field: String) throws {
        for value in values ?? [] { try Self.checkIdentifier(value, field: field) }
    }

    /// Checks a device token: hex, an even number of 2 to ``DeviceToken/maximumHexDigits`` digits.
    /// - Throws: ``APIError`` `422 invalid` naming `field`.
    static func checkToken(_ value: String?, field: String) throws {
        guard let value, DeviceToken.normalized(value) == nil else { return }
        throw APIError.invalid("\(field) must be hex: an even number of 2 to \(DeviceToken.maximumHexDigits) digits", field: field)
    }

    /// Checks a count of seconds against its range.
    /// - Throws: ``APIError`` `422 invalid` naming `field`.
    static func checkSeconds(_ value: Int?, in range: ClosedRange<Int>, field: String) throws {
        guard let value, !range.contains(value) else { return }
        throw APIError.invalid("\(field) must be from \(range.lowerBound) to \(range.upperBound) seconds", field: field)
    }

    private static func holdsControlCharacter(_ value: String) -> Bool {
        value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
