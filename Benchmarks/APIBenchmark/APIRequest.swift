import NIOCore
import NIOHTTP1

/// One request of the benchmark to the Livecast API: a method, a path under the server, a JSON body, and headers
/// of its own.
struct APIRequest: Sendable {
    var method: HTTPMethod
    var path: String
    var body: ByteBuffer?
    /// Sent besides those of every request (``HTTPExchangeHandler``).
    var headers: HTTPHeaders

    /// A request with `json` (already encoded) as its body, or none.
    init(_ method: HTTPMethod, _ path: String, json: String? = nil, headers: HTTPHeaders = [:]) {
        self.method = method
        self.path = path
        self.body = json.map { ByteBuffer(string: $0) }
        self.headers = headers
    }
}

/// The server's answer to an ``APIRequest``.
struct APIAnswer: Sendable {
    /// The HTTP status; `0` when no answer came (the connection closed or failed).
    var status: Int
    /// The body as text (or why no answer came).
    var body: String
    /// When the end of the answer was read, on the client's event loop.
    var receivedAt: NIODeadline

    /// Whether the status is 2xx.
    var isSuccess: Bool { (200..<300).contains(self.status) }

    /// `STATUS BODY`, for error reports.
    var description: String { "\(self.status) \(self.body)" }
}
