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
        // One pass over the bytes (generic splitting was a visible share of the emulator's time per request).
        var target = target
        let (segmentRanges, pathLength) = target.withUTF8 { bytes in
            var ranges: [Range<Int>] = []
            ranges.reserveCapacity(4)
            var segmentStart = 0
            var pathLength = bytes.count
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") {
                if segmentStart < offset { ranges.append(segmentStart..<offset) }
                segmentStart = offset + 1
                if byte == UInt8(ascii: "?") {
                    pathLength = offset
                    break
                }
            }
            if segmentStart < pathLength { ranges.append(segmentStart..<pathLength) }
            return (ranges, pathLength)
        }
        let utf8 = target.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        self.pathSegments = segmentRanges.map { target[index($0.lowerBound)..<index($0.upperBound)] }
        if pathLength < utf8.count {
            self.path = String(target[..<index(pathLength)])
            self.query = String(target[index(pathLength + 1)...])
        } else {
            self.path = target
            self.query = nil
        }
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
