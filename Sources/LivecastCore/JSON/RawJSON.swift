import Foundation

/// JSON text that has been checked to parse, kept byte for byte as it was given.
///
/// `content-state` and `attributes` travel to the device exactly as the backend wrote them (docs/ARCHITECTURE.md,
/// invariant 3), so Livecast splices this text into payloads instead of re-encoding it.
public struct RawJSON: Sendable, Hashable, CustomStringConvertible {
    /// The JSON text, without surrounding white space.
    public let text: String

    /// Checks that `text` is one JSON value and keeps it unchanged (surrounding white space trimmed).
    /// - Parameter text: JSON text, for example `{"homeScore": 2}`.
    /// - Throws: ``RawJSON/ParseError`` when the text is not JSON.
    public init(validating text: String) throws(ParseError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (try? JSONDecoder().decode(JSONValue.self, from: Data(trimmed.utf8))) != nil else {
            throw ParseError()
        }
        self.text = trimmed
    }

    /// Keeps text already known to be one JSON value (a member of a document a parser accepted).
    init(trusted text: String) {
        self.text = text
    }

    /// Encodes a parsed value as compact JSON with sorted keys.
    public init(_ value: JSONValue) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a JSONValue cannot fail: every case maps to a JSON primitive or container.
        self.text = String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    /// The parsed value.
    public var value: JSONValue {
        // `text` was validated (or produced by the encoder) when this value was made.
        (try? JSONDecoder().decode(JSONValue.self, from: Data(self.text.utf8))) ?? .null
    }

    /// `true` when the text is a JSON object.
    public var isObject: Bool { self.text.first == "{" }

    public var description: String { self.text }

    /// The text given to ``RawJSON/init(validating:)`` is not a JSON value.
    public struct ParseError: Error, Hashable, CustomStringConvertible {
        public var description: String { "not valid JSON" }
    }
}

extension RawJSON: Codable {
    /// Decodes any JSON value. A top-level member keeps the exact text the document gave it when the decoder's
    /// `userInfo` holds the document's ``Members`` under ``rawMembersKey``; otherwise the value is kept
    /// as compact JSON text.
    ///
    /// A kept member is decoded as a ``JSONValue`` only when that could fail (``mayNotDecode``), so that it is refused
    /// just as a decoded one would be; building the value for every member showed in `livecast serve`'s profile
    /// under activity updates (docs/PERFORMANCE.md).
    public init(from decoder: any Decoder) throws {
        if decoder.codingPath.count == 1,
            let members = (decoder.userInfo[Self.rawMembersKey] as? Members)?.members,
            let raw = members[decoder.codingPath[0].stringValue]
        {
            if raw.mayNotDecode { _ = try JSONValue(from: decoder) }
            self = raw
        } else {
            self.init(try JSONValue(from: decoder))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try self.value.encode(to: encoder)
    }
}
