import CNGHTTP2

/// Lays out one response's header block for nghttp2 at a time: `:status` and the response's headers, copied into
/// scratch space this object owns. nghttp2 copies them at submission (they carry no NO_COPY flags), so the space is
/// reused for the next response.
///
/// The request ids are sent as literals that HPACK does not index: each response has new ones, so adding them to the
/// dynamic table would only push out the entries that repeat.
final class ResponseHeaderBlock {
    private static let nameValueCapacity = 32
    private static let scratchCapacity = 16 * 1024
    private static let unindexedNames: Set<String> = ["apns-id", "apns-unique-id", "apns-request-id"]

    private let nameValues = UnsafeMutableBufferPointer<nghttp2_nv>.allocate(capacity: ResponseHeaderBlock.nameValueCapacity)
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ResponseHeaderBlock.scratchCapacity, alignment: 1)

    deinit {
        self.nameValues.deallocate()
        self.scratch.deallocate()
    }

    /// Lays out `:status` and `headers`, and passes them to `body`. Headers past the space are left out; the
    /// emulator's responses have a handful of short ones.
    func withHeaders<Result>(
        status: Int,
        headers: [(String, String)],
        _ body: (UnsafeMutablePointer<nghttp2_nv>, Int) -> Result
    ) -> Result {
        var count = 0
        var used = 0
        func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int)? {
            let length = text.utf8.count
            guard used + length <= Self.scratchCapacity else { return nil }
            let start = self.scratch.baseAddress!.advanced(by: used).assumingMemoryBound(to: UInt8.self)
            _ = UnsafeMutableBufferPointer(start: start, count: length).initialize(from: text.utf8)
            used += length
            return (start, length)
        }
        func add(_ name: String, _ value: String) {
            guard count < Self.nameValueCapacity, let (namePointer, nameLength) = copy(name),
                let (valuePointer, valueLength) = copy(value)
            else { return }
            let flags = Self.unindexedNames.contains(name) ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : 0
            self.nameValues[count] = nghttp2_nv(name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength, flags: flags)
            count += 1
        }
        add(":status", String(status))
        for (name, value) in headers { add(name, value) }
        return body(self.nameValues.baseAddress!, count)
    }
}
