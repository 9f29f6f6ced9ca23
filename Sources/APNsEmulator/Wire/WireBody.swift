import Crypto
import Foundation
import LivecastCore

/// What the wire log keeps of a request body: its digest and the three `aps` fields the judge reads.
struct WireBody: Sendable, Hashable {
    /// The hex SHA-256 of the bytes.
    var digest: String
    /// `aps.timestamp`.
    var timestamp: Int?
    /// `aps.event`.
    var event: String?
    /// `aps.content-state`, compact JSON with sorted keys.
    var contentState: String?

    /// Reads a body; one that is not a JSON object with an `aps` object keeps only its digest.
    init(_ bytes: [UInt8]) {
        self.digest = Self.hex(SHA256.hash(data: bytes))
        guard !bytes.isEmpty, let aps = (try? JSONDecoder().decode(Envelope.self, from: Data(bytes)))?.aps else { return }
        self.timestamp = aps.timestamp
        self.event = aps.event
        self.contentState = aps.contentState
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func hex(_ digest: SHA256.Digest) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(SHA256.Digest.byteCount * 2)
        for byte in digest {
            text.append(Self.hexDigits[Int(byte >> 4)])
            text.append(Self.hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `{"aps": …}`; other members are skipped.
    private struct Envelope: Decodable {
        var aps: APS?

        private enum CodingKeys: String, CodingKey {
            case aps
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.aps = try? container.decodeIfPresent(APS.self, forKey: .aps)
        }
    }

    /// The `aps` fields the judge reads, each `nil` when absent or of another type.
    private struct APS: Decodable {
        var timestamp: Int?
        var event: String?
        var contentState: String?

        private enum CodingKeys: String, CodingKey {
            case timestamp
            case event
            case contentState = "content-state"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.timestamp = (try? container.decodeIfPresent(JSONValue.self, forKey: .timestamp))?.intValue
            self.event = try? container.decodeIfPresent(String.self, forKey: .event)
            self.contentState = (try? container.decodeIfPresent(JSONValue.self, forKey: .contentState)).map { RawJSON($0).text }
        }
    }
}
