import NIOCore
import NIOHPACK

/// One HTTP/2 request as the emulator's routes see it: complete, with its body collected.
struct EmulatorRequest {
    /// `:method`.
    var method: String
    /// `:path`, without the query.
    var path: String
    /// The query after `?`, if any.
    var query: String?
    /// The regular (non-pseudo) headers.
    var headers: HPACKHeaders
    /// The body.
    var body: ByteBuffer

    init(headers: HPACKHeaders, body: ByteBuffer) {
        self.method = headers.first(name: ":method") ?? ""
        let fullPath = headers.first(name: ":path") ?? ""
        if let question = fullPath.firstIndex(of: "?") {
            self.path = String(fullPath[..<question])
            self.query = String(fullPath[fullPath.index(after: question)...])
        } else {
            self.path = fullPath
            self.query = nil
        }
        var regular = HPACKHeaders()
        for (name, value, indexing) in headers where !name.hasPrefix(":") {
            regular.add(name: name, value: value, indexing: indexing)
        }
        self.headers = regular
        self.body = body
    }

    /// The value of a header that must appear at most once; `.repeated` when it appears more than once.
    func single(_ name: String) -> HeaderValue {
        let values = self.headers[name]
        switch values.count {
        case 0: return .absent
        case 1: return .present(values[0])
        default: return .repeated
        }
    }

    /// The path's segments, without empty ones: `/3/device/abc` is `["3", "device", "abc"]`.
    var pathSegments: [Substring] {
        self.path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// How a header appears in a request.
    enum HeaderValue: Equatable {
        case absent
        case present(String)
        case repeated
    }
}
