import Hummingbird
import LivecastService
import LivecastStore

extension LivecastAPI {
    /// `PUT` and `GET /v1/apps/{bundleId}/feeds/{feedKey}` (operator). A `PUT` asking for a channel creates one at
    /// APNs when the feed has none.
    func addFeedRoutes(to routes: RouteRegistrar) {
        let path = "/v1/apps/{bundleId}/feeds/{feedKey}"
        routes.app(.put, path, role: .operator, callsAPNs: true) { request, context, scope in
            let body = try await request.decodeJSON(as: FeedBody.self, context: context)
            let feedKey = try context.parameters.decoded("feedKey")
            guard !body.attributesType.isEmpty else { throw APIError.invalid("attributesType must not be empty", field: "attributesType") }
            let policy = try body.channel.map { try StoragePolicyName(parsing: $0.storagePolicy) }
            let feeds = Feeds(client: self.database, logger: self.logger)
            var (feed, created) = try await feeds.put(
                Feeds.Definition(
                    appID: scope.appID,
                    feedKey: feedKey,
                    attributesType: body.attributesType,
                    attributes: body.attributes,
                    staleAfter: body.staleAfterSeconds.map { Duration.seconds($0) },
                    staleGrace: body.staleGraceSeconds.map { Duration.seconds($0) }
                )
            )
            if let policy, feed.channelID == nil {
                let channel = try await self.channels(scope).create(
                    appID: scope.appID,
                    bundleID: scope.bundleID,
                    storagePolicy: policy.apnsValue,
                    feedKey: feedKey
                )
                feed.channelID = channel.channelID
            }
            return try .json(feed, status: created ? .created : .ok)
        }
        routes.app(.get, path, role: .operator) { _, context, scope in
            let feedKey = try context.parameters.decoded("feedKey")
            let feeds = Feeds(client: self.database, logger: self.logger)
            guard
                let feed = try await feeds.get(appID: scope.appID, feedKey: feedKey, registrationTimeout: self.configuration.startRegistrationTimeout)
            else {
                throw APIError.notFound("no feed \(feedKey)", field: "feedKey")
            }
            return try .json(feed)
        }
    }
}
