import Foundation
import Hummingbird

extension Parameters {
    /// A path parameter, percent-decoded: channel ids are base64 and hold `/`, `+` and `=`, so clients send them
    /// percent-encoded, and other ids may be encoded too. Every one is an identifier of ``InputLimits``: at most
    /// ``InputLimits/bundleIDBytes`` bytes for `bundleId` and ``InputLimits/identifierBytes`` for the others, with no
    /// control character.
    /// - Throws: ``APIError`` 400 when the encoding is broken or the value is empty; 422 when it is out of its limits.
    func decoded(_ name: String) throws -> String {
        // Most identifiers hold no escape; Foundation's decoding of one that has none showed in a registration's profile
        // (docs/PERFORMANCE.md).
        guard let raw = self.get(name), let value = raw.utf8.contains(UInt8(ascii: "%")) ? raw.removingPercentEncoding : String(raw),
            !value.isEmpty
        else {
            throw APIError.malformed("the path's \(name) is not validly percent-encoded", field: name)
        }
        let limit = name == "bundleId" ? InputLimits.bundleIDBytes : InputLimits.identifierBytes
        try InputLimits.checkIdentifier(value, field: name, maximumBytes: limit)
        return value
    }

    /// A numeric path parameter (an update or key id).
    /// - Throws: ``APIError`` 400 unless it is a positive 64-bit integer.
    func id(_ name: String) throws -> Int64 {
        guard let value = self.get(name).flatMap(Int64.init), value > 0 else {
            throw APIError.malformed("\(name) must be a positive integer", field: name)
        }
        return value
    }
}
