import NIOCore

/// One HTTP/2 request as the emulator's routes see it: complete, with its body collected.
struct EmulatorRequest {
    /// A regular (non-pseudo) header; HTTP/2 names are lowercase.
    typealias Header = (name: String, value: String)

    /// `:method`.
    var method: String
    /// `:path`, without the query.
    var path: String
    /// The query after `?`, if any.
    var query: String?
    /// The path's segments, without empty ones: `/3/device/abc` is `["3", "device", "abc"]`.
    var pathSegments: [Substring]
    /// The regular headers, in order.
    var headers: [Header]
    /// The body.
    var body: ByteBuffer

    /// - Parameters:
    ///   - method: `:method`.
    ///   - target: `:path`, with the query if any.
    ///   - headers: The regular headers, in order.
    ///   - body: The body.
    init(method: String, target: String, headers: [Header], body: ByteBuffer) {
        self.method = method
        if let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            self.path = String(target[..<question])
            self.query = String(target[target.index(after: question)...])
        } else {
            self.path = target
            self.query = nil
        }
        self.pathSegments = self.path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
        self.headers = headers
        self.body = body
    }

    /// The first value of a header, or `nil` when absent.
    func first(_ name: String) -> String? {
        self.headers.first { $0.name == name }?.value
    }

    /// The value of a header that must appear at most once; `.repeated` when it appears more than once.
    func single(_ name: String) -> HeaderValue {
        var found: String?
        for header in self.headers where header.name == name {
            if found != nil { return .repeated }
            found = header.value
        }
        return found.map { .present($0) } ?? .absent
    }

    /// How a header appears in a request.
    enum HeaderValue: Equatable {
        case absent
        case present(String)
        case repeated
    }
}
