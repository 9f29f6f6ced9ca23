import Hummingbird
import LivecastService
import LivecastStore
import Logging

/// `PUT` and `GET /v1/apps/{bundleId}/feeds/{feedKey}`, `GET …/feeds` and `GET …/feeds/{feedKey}/updates`
/// (operator), the lists paged. A `PUT` asking for a channel creates one at APNs when the feed has none.
struct FeedController: APIController {
    let feeds: Feeds
    let records: Records
    let channels: ChannelRegistries
    /// How long after a feed's start the device's app should register the started activity.
    let startRegistrationTimeout: Duration
    /// How long an activity stays active: a renewal's `before` must be shorter.
    let activityLifetime: Duration

    func addRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/feeds/{feedKey}"
        routes.app(.put, path, role: .operator, callsAPNs: true) { request, context, scope in
            try await self.put(request, context: context, scope: scope)
        }
        routes.app(.get, path, role: .operator) { _, context, scope in
            let feedKey = try context.parameters.decoded("feedKey")
            let feeds = self.feeds.logging(to: context.logger)
            guard let feed = try await feeds.get(appID: scope.appID, feedKey: feedKey, registrationTimeout: self.startRegistrationTimeout) else {
                throw APIError.notFound("no feed \(feedKey)", field: "feedKey")
            }
            return feed
        }
        routes.app(.get, "/v1/apps/{bundleId}/feeds", role: .operator) { request, context, scope in
            let parameters = request.uri.queryParameters
            let limit = try parameters.pageLimit()
            var after: String?
            if let value = parameters.get("after") {
                try InputLimits.checkRequiredIdentifier(value, field: "after")
                after = value
            }
            let feeds = try await self.feeds.logging(to: context.logger).list(
                appID: scope.appID,
                after: after,
                limit: limit + 1,
                registrationTimeout: self.startRegistrationTimeout
            )
            return PageBody("feeds", feeds, limit: limit) { $0.feedKey }
        }
        routes.app(.get, "\(path)/updates", role: .operator) { request, context, scope in
            let feedKey = try context.parameters.decoded("feedKey")
            let parameters = request.uri.queryParameters
            let limit = try parameters.pageLimit()
            let before = try parameters.integer("before", in: 1...Int64.max)
            guard
                let updates = try await self.records.logging(to: context.logger).updates(
                    ofFeed: feedKey,
                    appID: scope.appID,
                    before: before,
                    limit: limit + 1
                )
            else {
                throw APIError.notFound("no feed \(feedKey)", field: "feedKey")
            }
            return PageBody("updates", updates, limit: limit) { $0.updateID }
        }
    }

    /// Defines or redefines a feed; creates its channel at APNs when it asks for one and has none.
    private func put(_ request: Request, context: APIRequestContext, scope: AppScope) async throws -> EditedResponse<Feeds.Feed> {
        let body = try await request.decodeJSON(as: FeedBody.self, context: context)
        let feedKey = try context.parameters.decoded("feedKey")
        guard !body.attributesType.isEmpty else { throw APIError.invalid("attributesType must not be empty", field: "attributesType") }
        let policy = try body.channel.map { try StoragePolicyName(parsing: $0.storagePolicy) }
        var (feed, created) = try await self.feeds.logging(to: context.logger).put(
            Feeds.Definition(
                appID: scope.appID,
                feedKey: feedKey,
                attributesType: body.attributesType,
                attributes: body.attributes,
                staleAfter: body.staleAfterSeconds.map { Duration.seconds($0) },
                staleGrace: body.staleGraceSeconds.map { Duration.seconds($0) },
                renewal: try body.renewal?.renewal(activityLifetime: self.activityLifetime)
            )
        )
        if let policy, feed.channelID == nil {
            let channel = try await self.channels.registry(of: scope, logger: context.logger).create(
                appID: scope.appID,
                bundleID: scope.bundleID,
                storagePolicy: policy.apnsValue,
                feedKey: feedKey
            )
            feed.channelID = channel.channelID
        }
        return EditedResponse(status: created ? .created : .ok, response: feed)
    }
}
