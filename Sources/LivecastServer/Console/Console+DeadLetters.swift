import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/dead-letters` and `POST /console/dead-letters/{id}/replay` (operator, as in the API).
    func addDeadLetterRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "dead-letters") { request, context, session in
            let after = request.uri.queryParameters.get("after")
            return try await self.deadLettersPage(after: after, context: context, session: session)
        }
        self.action(pages, "dead-letters/:deadLetterId/replay") { _, _, context, session in
            let id = try context.parameters.id("deadLetterId")
            let answer = try await self.api.call(.post, "\(Self.appPath(session))/dead-letters/\(id)/replay", context: context)
            var page = try await self.deadLettersPage(after: nil, context: context, session: session)
            if answer.isSuccess {
                page.notice = "Dead letter \(id) replayed: \(answer.json["outcome"]?.stringValue ?? "done")."
            } else {
                page.status = answer.status
                page.error = answer.error
                page.retryAfter = answer.retryAfter
            }
            return self.render(page, session)
        }
    }

    private func deadLettersPage(after: String?, context: APIRequestContext, session: ConsoleSessions.Session) async throws -> ConsolePage {
        let answer = try await self.api.call(.get, "\(Self.appPath(session))/dead-letters\(InProcessAPI.query([("after", after)]))", context: context)
        guard answer.isSuccess else { return .refusal(answer, title: "Dead letters", section: .deadLetters) }
        var page = ConsolePage(template: "deadLetters", title: "Dead letters", section: .deadLetters)
        page.model["letters"] = answer.json["deadLetters"].items.map { letter in
            var row = ConsoleView.object(letter)
            row["lastTry"] = ConsoleView.time(letter["lastTryAt"]?.intValue.map(Int64.init))
            row["replayed"] = ConsoleView.time(letter["replayedAt"]?.intValue.map(Int64.init))
            return row
        }
        if let next = answer.json["next"]?.intValue { page.model["next"] = next }
        return page
    }
}
