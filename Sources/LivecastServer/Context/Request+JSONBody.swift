import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import NIOCore

extension Request {
    /// Reads the body, at most ``APIRequestContext/maximumBodySize`` bytes, and decodes it as JSON; every way it
    /// can fail becomes the ``APIError`` the API documents (400 for malformed JSON, a wrong type or a missing
    /// field, naming the field; 413 for a body over the cap).
    func decodeJSON<Body: Decodable>(as type: Body.Type, context: APIRequestContext) async throws -> Body {
        try Self.decodeJSON(as: type, from: try await self.bodyBytes(upTo: context.maxUploadSize))
    }

    /// Reads the body.
    /// - Throws: ``APIError`` 413 when it is over `limit` bytes, as its `Content-Length` may say before it is read.
    func bodyBytes(upTo limit: Int) async throws -> [UInt8] {
        if let length = self.headers[.contentLength].flatMap(Int.init), length > limit {
            throw APIError.bodyTooLarge(limit: limit)
        }
        do {
            return Array(try await self.body.collect(upTo: limit).readableBytesView)
        } catch is NIOTooManyBytesError {
            throw APIError.bodyTooLarge(limit: limit)
        }
    }

    /// Decodes JSON text as the API decodes a body: the errors are ``decodeJSON(as:context:)``'s, and a
    /// ``CheckedBody`` is checked against its limits. A bulk import decodes each of its rows with it.
    static func decodeJSON<Body: Decodable>(as type: Body.Type, from bytes: [UInt8]) throws -> Body {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        // `contentState` and `attributes` go to the devices exactly as the client wrote them (docs/ARCHITECTURE.md, invariant 3).
        let members = RawJSON.Members(of: bytes)
        decoder.userInfo[RawJSON.rawMembersKey] = members
        do {
            return try Self.checked(try decoder.decode(Body.self, from: data), text: bytes, members: members)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty && Self.isJSON(data) {
            // Foundation reports a number too large for its field as invalid JSON, with no field.
            throw APIError.malformed("a number is out of range: integers must fit in 64 bits")
        } catch let error as DecodingError {
            throw APIError(decoding: error)
        }
    }

    /// The checks a body passes once it decoded: no NUL character (``refuseNUL(in:members:)``), and a
    /// ``CheckedBody``'s limits. A bulk import that decoded all its rows at once checks each row with it.
    /// - Parameters:
    ///   - body: The decoded body.
    ///   - text: The JSON text it was decoded from.
    ///   - members: The text's top-level members, when a decoder already has them.
    static func checked<Body>(_ body: Body, text: [UInt8], members: RawJSON.Members? = nil) throws -> Body {
        try Self.refuseNUL(in: text, members: members)
        try (body as? any CheckedBody)?.checkLimits()
        return body
    }

    /// PostgreSQL's `text` cannot hold U+0000, and no device needs one: a body with `\u0000` in any string (a key or
    /// a value, `contentState` and `attributes` included) is refused, naming the top-level member that holds it.
    private static func refuseNUL(in text: [UInt8], members: RawJSON.Members?) throws {
        guard JSONText.holdsEscapedNUL(text) else { return }
        let found = members.map(\.members) ?? RawJSON.topLevelMembers(of: text)
        let field = found?.first { JSONText.holdsEscapedNUL($0.value.text.utf8) }?.key
        throw APIError.invalid("\(field ?? "the body") must not hold a NUL character (\\u0000)", field: field)
    }

    /// Whether the text is one JSON value, of any kind.
    static func isJSON(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
    }
}

extension APIError {
    /// A 400 naming the field that did not decode.
    init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey], appending key: (any CodingKey)? = nil) -> String? {
            let keys = codingPath + (key.map { [$0] } ?? [])
            guard !keys.isEmpty else { return nil }
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath, appending: key)
            self = .malformed("\(field ?? key.stringValue) is required", field: field)
        case .valueNotFound(_, let context):
            let field = path(context.codingPath)
            self = .malformed("\(field ?? "the body") must not be null", field: field)
        case .typeMismatch(let type, let context):
            let field = path(context.codingPath)
            self = .malformed("\(field ?? "the body") must be \(Self.describe(type))", field: field)
        case .dataCorrupted(let context):
            if let field = path(context.codingPath) {
                self = .malformed("\(field) is malformed: \(context.debugDescription)", field: field)
            } else {
                self = .malformed("the body is not valid JSON")
            }
        @unknown default:
            self = .malformed("the body could not be read")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "an integer"
        case is Double.Type: "a number"
        case is [Any].Type: "an array"
        default: "an object"
        }
    }
}
