package import PostgresNIO

/// A value of a state column (`activities.state`, `channels.state`, `feeds.state`, `updates.status`), or of another
/// column of a few named values (`updates.event`, `owed_pushes.target_kind`, `dead_letters.replay_outcome`), stored
/// as its raw value, and decoded from and bound to a query as itself: a model holds the state, never its spelling.
package protocol StoredState: RawRepresentable<String>, PostgresCodable {}

extension StoredState {
    /// The value as an SQL literal, `'pending'`, for `\(unescaped:)` in a query: a literal, not a bound parameter, so
    /// PostgreSQL matches the partial indexes built on it.
    package var sql: String { "'\(self.rawValue)'" }
}

// A stored value the API also encodes (or decodes) as JSON would match two of PostgresNIO's defaults, its JSON one
// and its raw-value one: these, more specific than either, keep it a text column's raw value.

extension StoredState where Self: Encodable {
    package static var psqlType: PostgresDataType { String.psqlType }

    package static var psqlFormat: PostgresFormat { String.psqlFormat }

    package func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        self.rawValue.encode(into: &byteBuffer, context: context)
    }
}

extension StoredState where Self: Decodable {
    package init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer,
        type: PostgresDataType,
        format: PostgresFormat,
        context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard let rawValue = try? String(from: &buffer, type: type, format: format, context: context), let value = Self(rawValue: rawValue) else {
            throw PostgresDecodingError.Code.failure
        }
        self = value
    }
}
