import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/keys`, `POST /console/keys` (create: the key is shown once) and
    /// `POST /console/keys/{keyId}/revoke` (with `cancelScheduledSends=true`, its scheduled sends are cancelled too):
    /// admin keys, as in the API.
    func addKeyRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "keys") { _, context, session in
            try await self.keysPage(context: context, session: session)
        }
        self.action(pages, "keys") { form, _, context, session in
            let answer = try await self.api.call(
                .post,
                "\(Self.appPath(session))/keys",
                body: .object(["role": .string(form["role"] ?? "")]),
                context: context
            )
            var page = try await self.keysPage(context: context, session: session)
            if answer.isSuccess, let key = answer.json["key"]?.stringValue {
                page.model["createdKey"] = ["id": key, "role": answer.json["role"]?.stringValue ?? ""]
            } else {
                page.status = answer.status
                page.error = answer.error
                page.retryAfter = answer.retryAfter
            }
            return self.render(page, session)
        }
        self.action(pages, "keys/:keyId/revoke") { form, _, context, session in
            let keyID = try context.parameters.id("keyId")
            let cancel = form["cancelScheduledSends"] == "true" ? "?cancelScheduledSends=true" : ""
            let answer = try await self.api.call(.delete, "\(Self.appPath(session))/keys/\(keyID)\(cancel)", context: context)
            guard keyID != session.caller.keyID || !answer.isSuccess else {
                // This session's own key: the session ended with it.
                return Self.redirect(to: "/console/login")
            }
            var page = try await self.keysPage(context: context, session: session)
            if answer.isSuccess {
                page.notice =
                    "Key \(keyID) was revoked: it no longer works, in the API or here."
                    + Self.scheduledSendsNotice(
                        waiting: answer.json["scheduledSends"]?.intValue ?? 0,
                        cancelled: answer.json["cancelledScheduledSends"]?.intValue ?? 0
                    )
                if answer.json["scheduledSends"]?.intValue ?? 0 > 0 { page.model["cancelSendsOf"] = ["keyId": keyID] }
            } else {
                page.status = answer.status
                page.error = answer.error
                page.retryAfter = answer.retryAfter
            }
            return self.render(page, session)
        }
    }

    /// What a revocation did to the key's scheduled sends, in a sentence (none when it made none).
    private static func scheduledSendsNotice(waiting: Int, cancelled: Int) -> String {
        var notice = ""
        if cancelled > 0 {
            notice += " \(cancelled) scheduled send\(cancelled == 1 ? "" : "s") it made \(cancelled == 1 ? "was" : "were") cancelled."
        }
        if waiting > 0 {
            notice += " \(waiting) scheduled send\(waiting == 1 ? "" : "s") it made will still go out at \(waiting == 1 ? "its" : "their") time."
        }
        return notice
    }

    private func keysPage(context: APIRequestContext, session: ConsoleSessions.Session) async throws -> ConsolePage {
        let answer = try await self.api.call(.get, "\(Self.appPath(session))/keys", context: context)
        guard answer.isSuccess else { return .refusal(answer, title: "Keys", section: .keys) }
        var page = ConsolePage(template: "keys", title: "Keys", section: .keys)
        page.model["keyList"] = answer.json["keys"].items.map { key in
            var row = ConsoleView.object(key)
            row["created"] = ConsoleView.time(iso: key["createdAt"]?.stringValue)
            row["revoked"] = ConsoleView.time(iso: key["revokedAt"]?.stringValue)
            row["isSelf"] = key["keyId"]?.intValue == Int(session.caller.keyID)
            return row
        }
        return page
    }
}
