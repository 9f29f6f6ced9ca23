import CNGHTTP2

/// Lays out one request's header block for nghttp2 at a time: the template's pairs as they are, the values that
/// vary per request (`:path`, `authorization`, the extra headers) copied into scratch space this object owns.
/// nghttp2 copies those at submission (they carry no NO_COPY flags), so the space is reused for the next request.
final class HTTP2RequestHeaders {
    private static let nameValueCapacity = 32
    private static let scratchCapacity = 16 * 1024

    private let nameValues = UnsafeMutableBufferPointer<nghttp2_nv>.allocate(capacity: HTTP2RequestHeaders.nameValueCapacity)
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: HTTP2RequestHeaders.scratchCapacity, alignment: 1)

    deinit {
        self.nameValues.deallocate()
        self.scratch.deallocate()
    }

    /// Lays out `exchange`'s headers, sending `authorization`, and passes them to `body`.
    /// - Returns: what `body` returns, or `nil` when the headers do not fit.
    func withHeaders<Result>(
        of exchange: HTTP2Exchange,
        authorization: String,
        _ body: (UnsafeMutablePointer<nghttp2_nv>, Int) -> Result
    ) -> Result? {
        var count = 0
        var used = 0
        var fits = true
        func add(_ nameValue: nghttp2_nv) {
            guard count < Self.nameValueCapacity else {
                fits = false
                return
            }
            self.nameValues[count] = nameValue
            count += 1
        }
        func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>?, Int) {
            let length = text.utf8.count
            guard used + length <= Self.scratchCapacity else {
                fits = false
                return (nil, 0)
            }
            let start = self.scratch.baseAddress!.advanced(by: used).assumingMemoryBound(to: UInt8.self)
            _ = UnsafeMutableBufferPointer(start: start, count: length).initialize(from: text.utf8)
            used += length
            return (start, length)
        }
        func addCopy(_ name: String, _ value: String) {
            let (namePointer, nameLength) = copy(name)
            let (valuePointer, valueLength) = copy(value)
            add(nghttp2_nv(name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength, flags: 0))
        }
        for nameValue in exchange.request.template.pseudoHeaders { add(nameValue) }
        addCopy(":path", exchange.request.path)
        for nameValue in exchange.request.template.headers { add(nameValue) }
        addCopy("authorization", authorization)
        for (name, value) in exchange.request.extraHeaders { addCopy(name, value) }
        guard fits else { return nil }
        return body(self.nameValues.baseAddress!, count)
    }
}
