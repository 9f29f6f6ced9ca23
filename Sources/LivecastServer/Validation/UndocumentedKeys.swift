import Foundation

/// Refuses a JSON object with a key the API does not document, where a key it would otherwise ignore means the
/// sender expects something Livecast will not do (an alert's `subtitle`, which ActivityKit does not show).
enum UndocumentedKeys {
    /// Any key of the object being decoded.
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// - Parameters:
    ///   - decoder: The decoder of the object; a value that is not an object is left to the caller's decoding.
    ///   - allowed: The keys the object may have.
    ///   - what: What the object is, for the message.
    /// - Throws: ``APIError`` `422 invalid` naming the first undocumented key by its path (`alert.subtitle`).
    static func refuse(in decoder: any Decoder, allowing allowed: [String], what: String) throws {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else { return }
        let extra = container.allKeys.map(\.stringValue).filter { !allowed.contains($0) }.sorted()
        guard let key = extra.first else { return }
        let field = (decoder.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } + [key])
            .joined(separator: ".")
            .replacingOccurrences(of: ".[", with: "[")
        throw APIError.invalid(
            "\(field) is not a key of \(what); it takes \(allowed.joined(separator: ", "))",
            field: field
        )
    }
}
