import Hummingbird

/// What a start, update or end is posted to: its kind and its target's kind. A scheduled request keeps it, to go
/// through the same checks and store when its time comes.
enum UpdateRoute: String, Sendable, CaseIterable {
    case feedStart, feedUpdate, feedEnd, activityUpdate, activityEnd

    /// The path parameter that names the target.
    var targetParameter: String {
        switch self {
        case .feedStart, .feedUpdate, .feedEnd: "feedKey"
        case .activityUpdate, .activityEnd: "activityId"
        }
    }
}

/// A start, update or end's body, decoded as its route's: once a request, for its `sendAt` and its checks alike.
enum UpdateRequestBody {
    case start(FeedStartBody)
    case update(UpdateBody)
    case end(EndBody)

    /// Decodes `body` as `route`'s.
    /// - Throws: ``APIError`` 400 when it does not decode.
    init(_ route: UpdateRoute, body: [UInt8]) throws {
        switch route {
        case .feedStart: self = .start(try Request.decodeJSON(as: FeedStartBody.self, from: body))
        case .feedUpdate, .activityUpdate: self = .update(try Request.decodeJSON(as: UpdateBody.self, from: body))
        case .feedEnd, .activityEnd: self = .end(try Request.decodeJSON(as: EndBody.self, from: body))
        }
    }

    /// When the request is to be sent, if it is scheduled.
    var sendAt: Int? {
        switch self {
        case .start(let body): body.fields.sendAt
        case .update(let body): body.sendAt
        case .end(let body): body.sendAt
        }
    }

    /// Its dates, for ``DateChecks``.
    var dates: DateChecks.Dates {
        switch self {
        case .start(let body): body.fields.dates
        case .update(let body): body.dates
        case .end(let body): body.dates
        }
    }
}
