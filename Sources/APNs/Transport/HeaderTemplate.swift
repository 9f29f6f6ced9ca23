import CNGHTTP2

/// Request headers that stay the same across many requests, laid out once as nghttp2 name/value pairs in memory
/// this object owns, so each request reuses them without copying or re-encoding (`NGHTTP2_NV_FLAG_NO_COPY_*`).
///
/// Immutable after creation; every exchange that uses a template keeps it alive until its stream closes.
final class HeaderTemplate: @unchecked Sendable {
    /// `:method`, `:scheme` and `:authority`, which go before `:path`.
    let pseudoHeaders: [nghttp2_nv]
    /// Regular headers, after `:path`.
    let headers: [nghttp2_nv]
    private let storage: [UnsafeMutableBufferPointer<UInt8>]

    /// Lays out the constant headers of a request.
    /// - Parameters:
    ///   - method: `:method`.
    ///   - authority: `:authority`, `host` or `host:port`.
    ///   - headers: Regular headers, names in lowercase.
    init(method: String, authority: String, headers: [(String, String)]) {
        var storage: [UnsafeMutableBufferPointer<UInt8>] = []
        func pair(_ name: String, _ value: String) -> nghttp2_nv {
            let nameBytes = Self.copy(name, into: &storage)
            let valueBytes = Self.copy(value, into: &storage)
            return nghttp2_nv(
                name: nameBytes.baseAddress,
                value: valueBytes.baseAddress,
                namelen: nameBytes.count,
                valuelen: valueBytes.count,
                flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
            )
        }
        self.pseudoHeaders = [pair(":method", method), pair(":scheme", "https"), pair(":authority", authority)]
        self.headers = headers.map { pair($0.0, $0.1) }
        self.storage = storage
    }

    private static func copy(_ text: String, into storage: inout [UnsafeMutableBufferPointer<UInt8>]) -> UnsafeMutableBufferPointer<UInt8> {
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(text.utf8.count, 1))
        _ = bytes.initialize(from: text.utf8)
        storage.append(bytes)
        return UnsafeMutableBufferPointer(rebasing: bytes[0..<text.utf8.count])
    }

    deinit {
        for bytes in self.storage {
            bytes.deallocate()
        }
    }
}
