import Foundation
import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/feeds`, `GET /console/feeds/{feedKey}` and the live progress of an update being sent,
    /// `GET /console/updates/{updateId}/progress` (Server-Sent Events).
    func addFeedRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "feeds") { request, context, session in
            let after = request.uri.queryParameters.get("after")
            let answer = try await self.api.call(.get, "\(Self.appPath(session))/feeds\(InProcessAPI.query([("after", after)]))", context: context)
            guard answer.isSuccess else { return .refusal(answer, title: "Feeds", section: .feeds) }
            var page = ConsolePage(template: "feeds", title: "Feeds", section: .feeds)
            page.model = ["feeds": answer.json["feeds"].items.map(Self.feedModel)]
            if let next = answer.json["next"]?.stringValue { page.model["next"] = InProcessAPI.segment(next) }
            return page
        }
        self.page(pages, "feeds/:feedKey") { request, context, session in
            let feedKey = try context.parameters.decoded("feedKey")
            let path = "\(Self.appPath(session))/feeds/\(InProcessAPI.segment(feedKey))"
            let feed = try await self.api.call(.get, path, context: context)
            guard feed.isSuccess else { return .refusal(feed, title: "Feed \(feedKey)", section: .feeds) }
            let before = request.uri.queryParameters.get("before")
            let history = try await self.api.call(.get, "\(path)/updates\(InProcessAPI.query([("before", before)]))", context: context)
            guard history.isSuccess else { return .refusal(history, title: "Feed \(feedKey)", section: .feeds) }
            var page = ConsolePage(template: "feed", title: "Feed \(feedKey)", section: .feeds)
            page.model = ["feed": Self.feedModel(feed.json), "updates": history.json["updates"].items.map(Self.updateModel)]
            if let next = history.json["next"]?.intValue { page.model["next"] = next }
            return page
        }
        pages.get("updates/:updateId/progress") { _, context in
            guard let session = context.consoleSession else { throw APIError.unauthenticated }
            let updateID = try context.parameters.id("updateId")
            return try await self.progressStream(updateID: updateID, session: session, context: context)
        }
    }

    /// An update's progress as Server-Sent Events (`event: progress`), every half second until it is done (the last
    /// event says `"done": true`), the browser goes away, or the session ends (``eventStream(of:every:_:)``).
    private func progressStream(updateID: Int64, session: ConsoleSessions.Session, context: APIRequestContext) async throws -> Response {
        let path = "\(Self.appPath(session))/updates/\(updateID)"
        let api = self.api
        return try await self.eventStream(of: session) {
            let progress = Self.progress(try await api.call(.get, path, context: context))
            let data = try JSONSerialization.data(withJSONObject: progress, options: [.sortedKeys])
            return ConsoleEvent(name: "progress", data: String(decoding: data, as: UTF8.self), isLast: progress["done"] as? Bool == true)
        }
    }

    /// One progress event: the update's status and counts, and whether it is done.
    private static func progress(_ answer: InProcessAPI.Answer) -> [String: Any] {
        guard answer.isSuccess else {
            return [
                "status": answer.error?.code ?? "error", "sent": 0, "failed": 0, "pending": 0, "superseded": 0, "percent": 0, "failedByReason": [:],
                "done": true,
            ]
        }
        let update = Self.updateModel(answer.json)
        let reasons = answer.json["targets"]?["failedByReason"]?.objectValue?.compactMapValues(\.intValue) ?? [:]
        return [
            "status": update["status"] ?? "",
            "sent": update["sent"] ?? 0,
            "failed": update["failed"] ?? 0,
            "pending": update["pending"] ?? 0,
            "superseded": update["superseded"] ?? 0,
            "percent": update["percent"] ?? 0,
            "failedByReason": reasons,
            "done": update["live"] == nil,
        ]
    }

    /// A feed as the templates show it.
    static func feedModel(_ json: JSONValue) -> [String: Any] {
        var feed = ConsoleView.object(json)
        let feedKey = json["feedKey"]?.stringValue ?? ""
        feed["path"] = InProcessAPI.segment(feedKey)
        feed["tokenFollowers"] = json["followers"]?["token"]?.intValue ?? 0
        feed["channelFollowers"] = json["followers"]?["channel"]?.intValue ?? 0
        feed["startsSent"] = json["starts"]?["sent"]?.intValue ?? 0
        feed["startsUnregistered"] = json["starts"]?["unregistered"]?.intValue ?? 0
        feed["startsDeferred"] = json["starts"]?["deferred"]?.intValue ?? 0
        feed["startsDropped"] = json["starts"]?["dropped"]?.intValue ?? 0
        if let ratio = json["starts"]?["confirmationRatio"]?.doubleValue { feed["startsConfirmed"] = String(format: "%.0f%%", ratio * 100) }
        if let renewal = json["renewal"]?.objectValue {
            feed["renewal"] = [
                "before": ConsoleView.duration(Int64(renewal["before"]?.intValue ?? 0)),
                "ifUpdatedWithin": ConsoleView.duration(Int64(renewal["ifUpdatedWithin"]?.intValue ?? 0)),
            ]
        }
        if let channelID = json["channelId"]?.stringValue { feed["channel"] = ["id": channelID] }
        if let last = json["lastTimestamp"]?.intValue { feed["lastTime"] = ConsoleView.time(Int64(last)) }
        if case .object = json["lastUpdate"] {
            var last = ConsoleView.object(json["lastUpdate"])
            last["accepted"] = ConsoleView.time(json["lastUpdate"]?["acceptedAt"]?.intValue.map(Int64.init))
            feed["last"] = last
        }
        return feed
    }

    /// An update of a feed's history, with its progress (`live` while it is being sent).
    static func updateModel(_ json: JSONValue) -> [String: Any] {
        let targets = json["targets"]
        let sent = targets?["sent"]?.intValue ?? 0
        let failed = targets?["failed"]?.intValue ?? 0
        let pending = targets?["pending"]?.intValue ?? 0
        let status = json["status"]?.stringValue ?? ""
        var update: [String: Any] = [
            "updateId": json["updateId"]?.intValue ?? 0,
            "event": json["event"]?.stringValue ?? "",
            "status": status,
            "sent": sent,
            "failed": failed,
            "pending": pending,
            "percent": ConsoleView.percent(sent: sent, failed: failed, pending: pending),
            "reasons": ConsoleView.reasons(targets?["failedByReason"]),
        ]
        if let superseded = targets?["superseded"]?.intValue, superseded > 0 { update["superseded"] = superseded }
        if let time = ConsoleView.time(json["timestamp"]?.intValue.map(Int64.init)) { update["time"] = time }
        if let status = OutboxStatus(rawValue: status), [.pending, .dispatching].contains(status) { update["live"] = true }
        return update
    }
}
