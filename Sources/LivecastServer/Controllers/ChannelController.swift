import Hummingbird
import LivecastService
import LivecastStore
import Logging

/// The apps' channel registries, each over its app's APNs client, where channels are managed.
struct ChannelRegistries: Sendable {
    let channels: Channels
    let appClients: AppClients
    /// Channels an app may have before creation is refused, ahead of APNs.
    let limit: Int

    /// The registry of the scope's app, logging to `logger`.
    /// - Throws: ``StoreError`` when the app's signing key cannot be opened.
    func registry(of scope: AppScope, logger: Logger) async throws -> ChannelRegistry {
        let apns = try await self.appClients.client(forApp: scope.appID)
        return ChannelRegistry(channels: self.channels.logging(to: logger), apns: apns.client, limit: self.limit, logger: logger)
    }
}

/// `POST`, `GET /v1/apps/{bundleId}/channels`, `GET` and `DELETE …/channels/{channelId}` (operator). Channel ids are
/// base64: send them percent-encoded (`/` as `%2F`).
struct ChannelController: APIController {
    let registries: ChannelRegistries

    func addRoutes(to routes: RouteRegistrar) {
        routes.app(.post, "/v1/apps/{bundleId}/channels", role: .operator, callsAPNs: true) { request, context, scope in
            let body = try await request.decodeJSON(as: CreateChannelBody.self, context: context)
            let policy = try StoragePolicyName(parsing: body.storagePolicy)
            let channel = try await self.registries.registry(of: scope, logger: context.logger).create(
                appID: scope.appID,
                bundleID: scope.bundleID,
                storagePolicy: policy.apnsValue,
                feedKey: body.feed
            )
            return EditedResponse(status: .created, response: ChannelBody(channel))
        }
        routes.app(.get, "/v1/apps/{bundleId}/channels", role: .operator, callsAPNs: true) { request, context, scope in
            let source = request.uri.queryParameters.get("source") ?? "livecast"
            guard source == "livecast" || source == "apns" else { throw APIError.invalid("source must be livecast or apns", field: "source") }
            let registry = try await self.registries.registry(of: scope, logger: context.logger)
            if source == "apns" {
                return APNsChannelListBody(channelIds: try await registry.listAtAPNs(bundleID: scope.bundleID))
            }
            return ChannelListBody(channels: try await registry.list(appID: scope.appID).map(ChannelBody.init))
        }
        routes.app(.get, "/v1/apps/{bundleId}/channels/{channelId}", role: .operator, callsAPNs: true) { _, context, scope in
            let channelID = try context.parameters.decoded("channelId")
            let registry = try await self.registries.registry(of: scope, logger: context.logger)
            guard let channel = try await registry.get(appID: scope.appID, channelID: channelID) else {
                throw APIError.notFound("no channel \(channelID)", field: "channelId")
            }
            return ChannelBody(channel)
        }
        routes.app(.delete, "/v1/apps/{bundleId}/channels/{channelId}", role: .operator, callsAPNs: true) { request, context, scope in
            let force: Bool
            switch request.uri.queryParameters.get("force") {
            case nil, "false": force = false
            case "true": force = true
            default: throw APIError.invalid("force must be true or false", field: "force")
            }
            let channel = try await self.registries.registry(of: scope, logger: context.logger).retire(
                appID: scope.appID,
                bundleID: scope.bundleID,
                channelID: try context.parameters.decoded("channelId"),
                force: force
            )
            return ChannelBody(channel)
        }
    }
}
