import LivecastCore
import LivecastStore

/// `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`: an update's fields, with the alert required (ActivityKit shows
/// it when the activity starts), and who the start goes to. Its `staleDate` defaults to the timestamp plus the
/// feed's `staleAfterSeconds`; its priority, with the alert, to 10.
struct FeedStartBody: Decodable {
    /// `contentState`, `timestamp`, `staleDate`, `priority`, `relevanceScore` and `sendAt`, as an update says them.
    let fields: UpdateBody
    let alert: AlertBody
    let audience: AudienceBody
    /// Start devices whose user dismissed an activity of the feed too; by default they are left out.
    let includeDismissed: Bool?

    private enum CodingKeys: String, CodingKey {
        case alert, audience, includeDismissed
    }

    init(from decoder: any Decoder) throws {
        self.fields = try UpdateBody(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.alert = try container.decode(AlertBody.self, forKey: .alert)
        self.audience = try container.decode(AudienceBody.self, forKey: .audience)
        self.includeDismissed = try container.decodeIfPresent(Bool.self, forKey: .includeDismissed)
    }

    /// What the body says, field for field, as a start of `feedKey`.
    /// - Throws: ``APIError`` `invalid` for an audience that is not exactly one of its three.
    func request(appID: Int64, feedKey: String) throws -> FeedStarts.Request {
        var start = FeedStarts.Request(
            appID: appID,
            feedKey: feedKey,
            audience: try self.audience.audience(),
            contentState: self.fields.contentState,
            alert: self.alert.alert
        )
        start.timestamp = self.fields.timestamp
        start.staleDate = self.fields.staleDate
        start.relevanceScore = self.fields.relevanceScore
        start.priority = self.fields.priority
        start.includesDismissed = self.includeDismissed ?? false
        return start
    }
}

/// Who a start goes to: exactly one of the three.
struct AudienceBody: Decodable {
    let deviceIds: [String]?
    let userIds: [String]?
    /// `true`: every device with a push-to-start token for the feed's attributes type.
    let everyone: Bool?

    /// - Throws: ``APIError`` `invalid` unless exactly one of the three is given (and `everyone` is `true`).
    func audience() throws -> FeedStarts.Audience {
        switch (self.deviceIds, self.userIds, self.everyone) {
        case (let devices?, nil, nil): return .devices(devices)
        case (nil, let users?, nil): return .users(users)
        case (nil, nil, true?): return .everyone
        default: throw APIError.invalid("give exactly one of deviceIds, userIds or everyone: true", field: "audience")
        }
    }
}
