import NIOCore

/// One request and, once it arrives, its response, as it travels through a connection pool.
///
/// A class so the transport can track it by identity without copying. It is owned by exactly one event loop at a
/// time: handed to a connection's loop to be sent, and back to the pool to be retried; hence `@unchecked Sendable`.
final class HTTP2Exchange: @unchecked Sendable {
    /// Sent as `apns-*` etc.: the only response headers kept.
    private static let keptResponseHeaderPrefixes = [Array("apns-".utf8), Array("retry-after".utf8), Array("content-type".utf8)]
    private static let maximumResponseBody = 64 * 1024

    /// What the caller asked to send, and until when: the same for every attempt, and for a resend.
    struct Request {
        /// The constant headers.
        var template: HeaderTemplate
        /// `:path`.
        var path: String
        /// Headers that vary per request, after the template's.
        var extraHeaders: [(String, String)]
        /// The body; empty for none.
        var body: [UInt8]
        /// When the caller stops waiting.
        var deadline: NIODeadline
    }

    let request: Request
    /// Called once, on some event loop, with the exchange and its outcome.
    private let completion: @Sendable (HTTP2Exchange, HTTP2Result) -> Void
    /// Whether the layer above already sent this request once more after an answer (see ``resend()``).
    let isResend: Bool

    /// How often the transport sent it (retries after GOAWAY, refused streams and dropped connections count).
    var attempts = 0
    /// How often its connection closed while it was sent and unanswered: the server may or may not have
    /// processed it. Bounded by the maximum attempts; refused and never-sent requests are retried until the
    /// deadline instead, since the server certainly did not process them.
    var lostInFlight = 0
    /// When its last attempt went to nghttp2.
    var sentAt = NIODeadline.distantPast
    /// The `authorization` header its last attempt carried.
    var authorization: String?
    /// How much of the body nghttp2 has taken.
    var bodyOffset = 0
    /// The response as it arrives.
    var status = 0
    var responseHeaders: [(String, String)] = []
    var responseBody: [UInt8] = []
    var isResponseComplete = false
    private var isCompleted = false

    init(
        template: HeaderTemplate,
        path: String,
        extraHeaders: [(String, String)],
        body: [UInt8],
        deadline: NIODeadline,
        completion: @escaping @Sendable (HTTP2Exchange, HTTP2Result) -> Void
    ) {
        self.request = Request(template: template, path: path, extraHeaders: extraHeaders, body: body, deadline: deadline)
        self.completion = completion
        self.isResend = false
    }

    private init(resending exchange: HTTP2Exchange) {
        self.request = exchange.request
        self.completion = exchange.completion
        self.isResend = true
        self.attempts = exchange.attempts
        self.lostInFlight = exchange.lostInFlight
    }

    /// The same request, to send once more after its answer (the layer above decides when), with the same
    /// deadline and completion and the attempts so far.
    func resend() -> HTTP2Exchange {
        HTTP2Exchange(resending: self)
    }

    /// Forgets any partial response before the exchange is sent again.
    func resetForRetry() {
        self.bodyOffset = 0
        self.status = 0
        self.responseHeaders.removeAll()
        self.responseBody.removeAll()
        self.isResponseComplete = false
    }

    /// Reports the outcome; later calls are ignored.
    func complete(_ result: HTTP2Result) {
        guard !self.isCompleted else { return }
        self.isCompleted = true
        self.completion(self, result)
    }

    // MARK: - The response as nghttp2 decodes it

    /// Keeps `:status` and the headers the APNs layer reads.
    func receiveHeader(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":status".utf8) {
                self.status = value.reduce(0) { $0 * 10 + Int($1 &- UInt8(ascii: "0")) }
            }
        } else if Self.keptResponseHeaderPrefixes.contains(where: { name.starts(with: $0) }) {
            self.responseHeaders.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
    }

    /// Keeps the first 64 KiB of the response body.
    func receiveData(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard self.responseBody.count < Self.maximumResponseBody else { return }
        self.responseBody.append(contentsOf: bytes.prefix(Self.maximumResponseBody - self.responseBody.count))
    }

    /// Copies the next piece of the request body. - Returns: how many bytes, and whether the body is done.
    func readBody(into buffer: UnsafeMutableBufferPointer<UInt8>) -> (count: Int, isDone: Bool) {
        let count = min(buffer.count, self.request.body.count - self.bodyOffset)
        self.request.body.withUnsafeBufferPointer { body in
            _ = buffer.initialize(from: body[self.bodyOffset..<self.bodyOffset + count])
        }
        self.bodyOffset += count
        return (count, self.bodyOffset == self.request.body.count)
    }

    /// Reports the response received.
    func completeWithResponse() {
        let latency = Duration.nanoseconds((NIODeadline.now() - self.sentAt).nanoseconds)
        self.complete(
            .response(
                HTTP2Response(status: self.status, headers: self.responseHeaders, body: self.responseBody, attempts: self.attempts, latency: latency)
            )
        )
    }
}

/// What became of an exchange.
enum HTTP2Result: Sendable {
    /// The server answered.
    case response(HTTP2Response)
    /// No answer: see the error.
    case failure(TransportError)
}

/// A complete HTTP/2 response.
struct HTTP2Response: Sendable {
    var status: Int
    /// The response headers the APNs layer reads (`apns-*`, `retry-after`, `content-type`).
    var headers: [(String, String)]
    var body: [UInt8]
    /// How often the request was sent before this answer came.
    var attempts: Int
    /// From the last attempt's submission to the answer's end.
    var latency: Duration

    func header(_ name: String) -> String? {
        self.headers.first { $0.0 == name }?.1
    }
}
