/// A row of `POST /v1/apps/{bundleId}/push-to-start-tokens:import`: the device and attributes type the single `PUT`
/// names in its path, and that `PUT`'s body.
struct PushToStartTokenImportRow: Decodable {
    let deviceId: String
    let attributesType: String
    let body: PushToStartTokenBody

    private enum CodingKeys: String, CodingKey {
        case deviceId, attributesType, token, userId, osVersion, frequentUpdatesEnabled
    }

    /// Reads the row's members and its body's from one container: a second container for the body, as
    /// `PushToStartTokenBody(from:)` makes, was a sixth of an import's decoding.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.deviceId = try container.decode(String.self, forKey: .deviceId)
        self.attributesType = try container.decode(String.self, forKey: .attributesType)
        self.body = PushToStartTokenBody(
            token: try container.decode(String.self, forKey: .token),
            userId: try container.decodeIfPresent(String.self, forKey: .userId),
            userAssertion: nil,
            osVersion: try container.decodeIfPresent(String.self, forKey: .osVersion),
            frequentUpdatesEnabled: try container.decodeIfPresent(Bool.self, forKey: .frequentUpdatesEnabled)
        )
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
