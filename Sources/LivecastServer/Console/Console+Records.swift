import Foundation
import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/activities/{activityId}` (with a test push), `GET /console/devices/{deviceId}` and
    /// `GET /console/deliveries`; `GET /console/activities?activityId=` and `/console/devices?deviceId=` open one.
    func addRecordRoutes(to pages: RouterGroup<APIRequestContext>) {
        pages.get("activities") { request, _ in
            Self.redirect(to: "/console/activities/\(InProcessAPI.segment(request.uri.queryParameters.get("activityId") ?? ""))")
        }
        pages.get("devices") { request, _ in
            Self.redirect(to: "/console/devices/\(InProcessAPI.segment(request.uri.queryParameters.get("deviceId") ?? ""))")
        }
        self.page(pages, "activities/:activityId") { _, context, session in
            try await self.activityPage(try context.parameters.decoded("activityId"), context: context, session: session)
        }
        self.action(pages, "activities/:activityId/test-push") { form, _, context, session in
            let activityID = try context.parameters.decoded("activityId")
            return self.render(try await self.testPush(form, activityID: activityID, context: context, session: session), session)
        }
        self.page(pages, "devices/:deviceId") { _, context, session in
            let deviceID = try context.parameters.decoded("deviceId")
            let answer = try await self.api.call(
                .get,
                "\(Self.appPath(session))/push-to-start-tokens/\(InProcessAPI.segment(deviceID))",
                context: context
            )
            guard answer.isSuccess else { return .refusal(answer, title: "Device \(deviceID)", section: nil) }
            var page = ConsolePage(template: "device", title: "Device \(deviceID)", section: nil)
            page.model["tokens"] = answer.json["tokens"].items.map { token in
                var row = ConsoleView.object(token)
                row["id"] = token["token"]?.stringValue ?? ""
                row["registered"] = ConsoleView.time(token["registeredAt"]?.intValue.map(Int64.init))
                row["lastSeen"] = ConsoleView.time(token["lastSeenAt"]?.intValue.map(Int64.init))
                row["invalidated"] = ConsoleView.time(token["invalidatedAt"]?.intValue.map(Int64.init))
                return row
            }
            return page
        }
        self.page(pages, "deliveries") { request, context, session in
            try await self.deliveriesPage(request, context: context, session: session)
        }
    }

    private func activityPage(_ activityID: String, context: APIRequestContext, session: ConsoleSessions.Session) async throws -> ConsolePage {
        let answer = try await self.api.call(.get, "\(Self.appPath(session))/activities/\(InProcessAPI.segment(activityID))", context: context)
        guard answer.isSuccess else { return .refusal(answer, title: "Activity \(activityID)", section: nil) }
        let json = answer.json
        var activity = ConsoleView.object(json)
        activity["copyID"] = ["id": activityID]
        activity["path"] = InProcessAPI.segment(activityID)
        if let feed = json["feed"]?.stringValue { activity["feedPath"] = InProcessAPI.segment(feed) }
        if let device = json["deviceId"]?.stringValue {
            activity["device"] = device
            activity["devicePath"] = InProcessAPI.segment(device)
        }
        if let token = json["token"]?.stringValue { activity["tokenID"] = ["id": token] }
        if let channel = json["channelId"]?.stringValue { activity["channelID"] = ["id": channel] }
        activity["started"] = ConsoleView.time(json["startedAt"]?.intValue.map(Int64.init))
        activity["ended"] = ConsoleView.time(json["endedAt"]?.intValue.map(Int64.init))
        let state = json["state"]?.stringValue ?? ""
        // A feed's follower is updated through its feed (the API refuses it on its own).
        activity["canPush"] = state != ActivityState.ended.rawValue && state != ActivityState.dismissed.rawValue && json["feed"] == nil
        activity["contentState"] = "{}"
        var page = ConsolePage(template: "activity", title: "Activity \(activityID)", section: nil)
        page.model = ["activity": activity, "timeline": json["timeline"].items.map(Self.timelineEvent)]
        return page
    }

    /// One event of an activity's timeline, labelled.
    private static func timelineEvent(_ event: JSONValue) -> [String: Any] {
        let type = event["type"]?.stringValue ?? ""
        var model: [String: Any] = ["type": type, "label": Self.label(type)]
        model["at"] = ConsoleView.time(event["at"]?.intValue.map(Int64.init))
        let detail = [event["reason"]?.stringValue, event["token"]?.stringValue.map { "token \($0)" }].compactMap { $0 }
        if !detail.isEmpty { model["detail"] = detail.joined(separator: " · ") }
        if case .object = event["push"] { model["push"] = Self.pushModel(event["push"]) }
        return model
    }

    /// A push record (timeline, delivery log, test push).
    static func pushModel(_ push: JSONValue?) -> [String: Any] {
        var model = ConsoleView.object(push)
        if let apnsID = push?["apnsId"]?.stringValue { model["apns"] = ["id": apnsID] }
        if let activityID = push?["activityId"]?.stringValue { model["activityPath"] = InProcessAPI.segment(activityID) }
        model["when"] = ConsoleView.time(push?["at"]?.intValue.map(Int64.init))
        return model
    }

    /// `tokenRotated` → `Token rotated`.
    private static func label(_ type: String) -> String {
        var words = ""
        for character in type {
            if character.isUppercase { words += " " + character.lowercased() } else { words.append(character) }
        }
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// Sends one update to the activity through the API, waits up to ten seconds for APNs' answer, and shows it.
    private func testPush(
        _ form: ConsoleForm,
        activityID: String,
        context: APIRequestContext,
        session: ConsoleSessions.Session
    ) async throws -> ConsolePage {
        let contentText = form["contentState"] ?? "{}"
        guard let contentState = try? JSONDecoder().decode(JSONValue.self, from: Data(contentText.utf8)), case .object = contentState else {
            var page = try await self.activityPage(activityID, context: context, session: session)
            page.status = .unprocessableContent
            page.error = ("invalid", "the content state must be a JSON object, such as {\"home\": 1}")
            return page
        }
        var body: [String: JSONValue] = ["contentState": contentState]
        if let title = form["alertTitle"] { body["alert"] = .object(["title": .string(title)]) }
        let appPath = Self.appPath(session)
        let posted = try await self.api.call(
            .post,
            "\(appPath)/activities/\(InProcessAPI.segment(activityID))/updates",
            body: .object(body),
            context: context
        )
        guard posted.isSuccess, let updateID = posted.json["updateId"]?.intValue else {
            var page = try await self.activityPage(activityID, context: context, session: session)
            page.status = posted.status
            page.error = posted.error
            page.retryAfter = posted.retryAfter
            return page
        }
        var push: JSONValue?
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let found = try await self.api.call(.get, "\(appPath)/deliveries?updateId=\(updateID)", context: context)
            push = found.json["deliveries"].items.first
            if let outcome = push?["outcome"]?.stringValue, !["pending", "retrying"].contains(outcome) { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        var page = try await self.activityPage(activityID, context: context, session: session)
        var result = Self.pushModel(push)
        result["updateId"] = updateID
        if result["outcome"] == nil { result["outcome"] = "pending" }
        page.model["testPush"] = result
        page.notice = "Update \(updateID) was accepted."
        return page
    }

    private func deliveriesPage(_ request: Request, context: APIRequestContext, session: ConsoleSessions.Session) async throws -> ConsolePage {
        let parameters = request.uri.queryParameters
        var query: [String: String] = [:]
        for name in ["apnsId", "token", "updateId", "reason", "after"] {
            if let value = parameters.get(name)?.trimmingCharacters(in: .whitespaces), !value.isEmpty { query[name] = value }
        }
        var page = ConsolePage(template: "deliveries", title: "Deliveries", section: .deliveries)
        page.model["query"] = query
        guard !query.isEmpty else { return page }
        page.model["searched"] = true
        let search: [(name: String, value: String?)] = ["apnsId", "token", "updateId", "reason"].map { ($0, query[$0]) }
        let answer = try await self.api.call(
            .get,
            "\(Self.appPath(session))/deliveries\(InProcessAPI.query(search + [("after", query["after"])]))",
            context: context
        )
        guard answer.isSuccess else {
            page.status = answer.status
            page.error = answer.error
            page.retryAfter = answer.retryAfter
            page.model["searched"] = false
            return page
        }
        page.model["results"] = answer.json["deliveries"].items.map { Self.pushModel($0) }
        if let next = answer.json["next"]?.intValue {
            page.model["next"] = "/console/deliveries\(InProcessAPI.query(search + [("after", String(next))]))"
        }
        return page
    }
}
