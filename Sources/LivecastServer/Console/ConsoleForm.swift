import Foundation
import Hummingbird
import LivecastStore

/// A submitted console form (`application/x-www-form-urlencoded`).
struct ConsoleForm: Sendable {
    /// The largest form the console reads: far above any of its forms.
    static let maximumBytes = 64 * 1024

    let fields: [String: String]

    /// Reads the request's form. - Throws: ``APIError`` 413 for a body over ``maximumBytes``.
    init(_ request: Request) async throws {
        let bytes = try await request.bodyBytes(upTo: Self.maximumBytes)
        self.init(text: String(decoding: bytes, as: UTF8.self))
    }

    /// Parses `a=1&b=two+words`; a field named twice keeps its first value.
    init(text: String) {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decode(parts[0]), fields[name] == nil else { continue }
            fields[name] = parts.count > 1 ? Self.decode(parts[1]) ?? "" : ""
        }
        self.fields = fields
    }

    /// A field's value, `nil` when absent or empty.
    subscript(_ name: String) -> String? {
        self.fields[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the form carries the session's CSRF token.
    func carriesToken(of session: ConsoleSessions.Session) -> Bool {
        ConsoleSessions.isValid(csrfToken: self.fields["csrf"], for: session)
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
