package import Foundation

extension JSONEncoder {
    /// Compact JSON with sorted keys, slashes left alone (channel ids are base64), dates in ISO 8601: the API's
    /// answers, including the ones the store keeps for a retried request. Its settings never change, and it is safe
    /// to share.
    package static let sorted: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}
