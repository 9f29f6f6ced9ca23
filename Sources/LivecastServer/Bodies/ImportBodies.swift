/// A row of `POST /v1/apps/{bundleId}/push-to-start-tokens:import`: the device and attributes type the single `PUT`
/// names in its path, and that `PUT`'s body.
struct PushToStartTokenImportRow: Decodable {
    let deviceId: String
    let attributesType: String
    let body: PushToStartTokenBody

    private enum CodingKeys: String, CodingKey {
        case deviceId, attributesType
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.deviceId = try container.decode(String.self, forKey: .deviceId)
        self.attributesType = try container.decode(String.self, forKey: .attributesType)
        self.body = try PushToStartTokenBody(from: decoder)
    }
}

/// A row of `POST /v1/apps/{bundleId}/activities:import`: the activity id the single `PUT` names in its path, and
/// that `PUT`'s body.
struct ActivityImportRow: Decodable {
    let activityId: String
    let body: ActivityBody

    private enum CodingKeys: String, CodingKey {
        case activityId
    }

    init(from decoder: any Decoder) throws {
        self.activityId = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .activityId)
        self.body = try ActivityBody(from: decoder)
    }
}
