import Foundation
import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/channels` (Livecast's registry beside APNs' list), `POST /console/channels` (create) and
    /// `POST /console/channels/retire`: operator keys, as in the API.
    func addChannelRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "channels") { _, context, session in
            try await self.channelsPage(context: context, session: session)
        }
        self.action(pages, "channels") { form, _, context, session in
            var body: [String: JSONValue] = ["storagePolicy": .string(form["storagePolicy"] ?? "")]
            if let feed = form["feed"] { body["feed"] = .string(feed) }
            let answer = try await self.api.call(.post, "\(Self.appPath(session))/channels", body: .object(body), context: context)
            var page = try await self.channelsPage(context: context, session: session)
            if answer.isSuccess, let channelID = answer.json["channelId"]?.stringValue {
                page.model["created"] = ["id": channelID]
            } else {
                page.status = answer.status
                page.error = answer.error
                page.retryAfter = answer.retryAfter
            }
            return self.render(page, session)
        }
        self.action(pages, "channels/retire") { form, _, context, session in
            let channelID = form["channelId"] ?? ""
            let force = form["force"] == "true" ? "?force=true" : ""
            let answer = try await self.api.call(
                .delete,
                "\(Self.appPath(session))/channels/\(InProcessAPI.segment(channelID))\(force)",
                context: context
            )
            var page = try await self.channelsPage(context: context, session: session)
            if answer.isSuccess {
                page.notice = "The channel was deleted at APNs and retired."
            } else if answer.status == .conflict, let error = answer.error {
                page.status = .conflict
                page.model["retireWarning"] = ["message": error.message, "channelId": channelID]
            } else {
                page.status = answer.status
                page.error = answer.error
                page.retryAfter = answer.retryAfter
            }
            return self.render(page, session)
        }
    }

    /// The registry and APNs' list, each channel marked: at APNs or missing there, and APNs' orphans.
    private func channelsPage(context: APIRequestContext, session: ConsoleSessions.Session) async throws -> ConsolePage {
        let path = "\(Self.appPath(session))/channels"
        let registry = try await self.api.call(.get, path, context: context)
        guard registry.isSuccess else { return .refusal(registry, title: "Channels", section: .channels) }
        let apns = try await self.api.call(.get, "\(path)?source=apns", context: context)
        let atAPNs = Set(apns.json["channelIds"].items.compactMap(\.stringValue))
        let known = Set(registry.json["channels"].items.compactMap { $0["channelId"]?.stringValue })
        let rows: [[String: Any]] = registry.json["channels"].items.map { channel in
            var row = ConsoleView.object(channel)
            let channelID = channel["channelId"]?.stringValue ?? ""
            let state = channel["state"]?.stringValue.flatMap(ChannelState.init(rawValue:))
            row["id"] = channelID
            if let feed = channel["feed"]?.stringValue { row["feedPath"] = InProcessAPI.segment(feed) }
            // Unknown while APNs' list could not be read: not marked missing.
            row["atAPNs"] = !apns.isSuccess || atAPNs.contains(channelID) || state == .retired
            row["retirable"] = state != .retired
            return row
        }
        var page = ConsolePage(template: "channels", title: "Channels", section: .channels)
        page.model = [
            "registry": rows,
            "registryCount": rows.count,
            "orphans": atAPNs.subtracting(known).sorted().map { ["id": $0] },
            "apnsCount": atAPNs.count,
        ]
        if let error = apns.error { page.model["apnsError"] = "APNs' list could not be read: \(error.message)" }
        return page
    }
}
