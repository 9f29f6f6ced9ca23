import Foundation
import HTTPTypes
import Hummingbird
import LivecastCore
import NIOCore
import NIOFoundationEssentialsCompat
import Synchronization

/// The console's way into the API: it calls the API's own routes in this process, as the signed-in key, so a page
/// sees what the API would answer that key (roles, checks, errors, paging), and the console adds no second path to
/// the data.
struct InProcessAPI: Sendable {
    /// What a route answered.
    struct Answer: Sendable {
        let status: HTTPResponse.Status
        /// The JSON body (`.null` when there was none).
        let json: JSONValue
        /// `Retry-After`, on a `429`.
        let retryAfter: String?

        var isSuccess: Bool { (200..<300).contains(self.status.code) }
        /// The API's `{"error": {"code", "message"}}`, when it refused.
        var error: (code: String, message: String)? {
            guard !self.isSuccess else { return nil }
            return (self.json["error"]?["code"]?.stringValue ?? "error", self.json["error"]?["message"]?.stringValue ?? "HTTP \(self.status.code)")
        }
    }

    /// The API's routes only (not the console's own).
    let responder: RouterResponder<APIRequestContext>

    /// Calls `method path` as the context's caller (the session's key). Without one, the request must carry its own
    /// `Authorization`, which the API checks and counts as for any client (sign-in does this).
    /// - Parameters:
    ///   - path: The path and query, each part already percent-encoded (``segment(_:)``).
    ///   - body: A JSON body.
    func call(
        _ method: HTTPRequest.Method,
        _ path: String,
        body: JSONValue? = nil,
        headers: HTTPFields = [:],
        context: APIRequestContext
    ) async throws -> Answer {
        var fields = headers
        var buffer = ByteBuffer()
        if let body {
            buffer = ByteBuffer(bytes: try JSONEncoder().encode(body))
            fields[.contentType] = "application/json"
        }
        let request = Request(
            head: HTTPRequest(method: method, scheme: "http", authority: "livecast", path: path, headerFields: fields),
            body: RequestBody(buffer: buffer)
        )
        let response = try await self.responder.respond(to: request, context: context)
        let collected = CollectedBody()
        try await response.body.write(BodyCollector(collected: collected))
        let bytes = collected.bytes.withLock { $0 }
        let json = bytes.readableBytes == 0 ? JSONValue.null : (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: bytes))) ?? .null
        return Answer(status: response.status, json: json, retryAfter: response.headers[.retryAfter])
    }

    /// One path segment, percent-encoded (channel ids hold `/` and `+`).
    static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? value
    }

    /// A query string of the parameters that have a value, in their order (`?a=1&b=2`, or empty).
    static func query(_ parameters: [(name: String, value: String?)]) -> String {
        let pairs = parameters.compactMap { name, value in value.flatMap { $0.isEmpty ? nil : "\(name)=\(Self.segment($0))" } }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
}

/// The bytes of a response body a route wrote.
private final class CollectedBody: Sendable {
    let bytes = Mutex(ByteBuffer())
}

/// Collects a response body written by a route.
private struct BodyCollector: ResponseBodyWriter {
    let collected: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.collected.bytes.withLock { _ = $0.writeBuffer(&buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
