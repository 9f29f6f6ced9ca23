import LivecastCore
import LivecastStore

/// `POST /v1/apps/{bundleId}/feeds/{feedKey}/start`.
struct FeedStartBody: Decodable {
    /// The first `ContentState`, passed to the devices as given.
    let contentState: RawJSON
    /// ActivityKit shows it when the activity starts; required.
    let alert: AlertBody
    let audience: AudienceBody
    /// UNIX seconds; the server's time when absent.
    let timestamp: Int?
    /// UNIX seconds; defaults to the timestamp plus the feed's `staleAfterSeconds`.
    let staleDate: Int?
    let relevanceScore: Double?
    /// 5 or 10; 10 (a start carries an alert) when absent.
    let priority: Int?
    /// When to send it (UNIX seconds, at most 7 days ahead); at once when absent or past.
    let sendAt: Int?

    /// What the body says, field for field, as a start of `feedKey`.
    /// - Throws: ``APIError`` `invalid` for an audience that is not exactly one of its three.
    func request(appID: Int64, feedKey: String) throws -> FeedStarts.Request {
        var start = FeedStarts.Request(
            appID: appID,
            feedKey: feedKey,
            audience: try self.audience.audience(),
            contentState: self.contentState,
            alert: self.alert.alert
        )
        start.timestamp = self.timestamp
        start.staleDate = self.staleDate
        start.relevanceScore = self.relevanceScore
        start.priority = self.priority
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
