import Hummingbird
import LivecastService
import LivecastStore

extension LivecastAPI {
    /// `POST`, `GET /v1/apps/{bundleId}/channels`, `GET` and `DELETE …/channels/{channelId}` (operator). Channel ids
    /// are base64: send them percent-encoded (`/` as `%2F`).
    func addChannelRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/channels", role: .operator, callsAPNs: true) { request, context, scope in
            let body = try await request.decodeJSON(as: CreateChannelBody.self, context: context)
            let policy = try StoragePolicyName(parsing: body.storagePolicy)
            let channel = try await self.channels(scope).create(
                appID: scope.appID,
                bundleID: scope.bundleID,
                storagePolicy: policy.apnsValue,
                feedKey: body.feed
            )
            return try .json(ChannelBody(channel), status: .created)
        }
        routes.app(.get, "/v1/apps/{bundleId}/channels", role: .operator, callsAPNs: true) { request, _, scope in
            switch request.uri.queryParameters.get("source") {
            case nil, "livecast":
                return try .json(ChannelListBody(channels: try await self.channels(scope).list(appID: scope.appID).map(ChannelBody.init)))
            case "apns":
                return try .json(APNsChannelListBody(channelIds: try await self.channels(scope).listAtAPNs(bundleID: scope.bundleID)))
            default:
                throw APIError.invalid("source must be livecast or apns", field: "source")
            }
        }
        routes.app(.get, "/v1/apps/{bundleId}/channels/{channelId}", role: .operator, callsAPNs: true) { _, context, scope in
            let channelID = try context.parameters.decoded("channelId")
            guard let channel = try await self.channels(scope).get(appID: scope.appID, channelID: channelID) else {
                throw APIError.notFound("no channel \(channelID)", field: "channelId")
            }
            return try .json(ChannelBody(channel))
        }
        routes.app(.delete, "/v1/apps/{bundleId}/channels/{channelId}", role: .operator, callsAPNs: true) { request, context, scope in
            let force: Bool
            switch request.uri.queryParameters.get("force") {
            case nil, "false": force = false
            case "true": force = true
            default: throw APIError.invalid("force must be true or false", field: "force")
            }
            let channel = try await self.channels(scope).retire(
                appID: scope.appID,
                bundleID: scope.bundleID,
                channelID: try context.parameters.decoded("channelId"),
                force: force
            )
            return try .json(ChannelBody(channel))
        }
    }
}
