import Hummingbird
import LivecastStore

/// `POST /v1/apps/{bundleId}/keys`.
struct CreateKeyBody: Decodable {
    let role: String
}

/// A new key as listed, with `key`: the only time its full text is shown.
struct CreatedKeyBody: ResponseEncodable {
    let created: APIKeys.Key
    /// `lc_<prefix>_<secret>`: keep it now, it cannot be shown again.
    let text: String

    private enum CodingKeys: String, CodingKey {
        case text = "key"
    }

    /// The key's members, and `key` beside them.
    func encode(to encoder: any Encoder) throws {
        try self.created.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.text, forKey: .text)
    }
}

/// `GET /v1/apps/{bundleId}/keys`.
struct KeyListBody: ResponseEncodable {
    let keys: [APIKeys.Key]
}
