import Hummingbird
import LivecastCore
import LivecastStore

extension Console {
    /// `GET /console/webhooks` (operator, as in the API): the app's webhook endpoints and how their deliveries go.
    func addWebhookRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "webhooks") { _, context, session in
            let answer = try await self.api.call(.get, "\(Self.appPath(session))/webhooks", context: context)
            guard answer.isSuccess else { return .refusal(answer, title: "Webhooks", section: .webhooks) }
            var page = ConsolePage(template: "webhooks", title: "Webhooks", section: .webhooks)
            page.model["endpoints"] = answer.json["webhooks"].items.map { endpoint in
                var row = ConsoleView.object(endpoint)
                let delivery = endpoint["delivery"]
                let events = endpoint["events"].items.compactMap(\.stringValue)
                row["eventList"] = events.isEmpty ? "all events" : events.joined(separator: ", ")
                row["pending"] = delivery?["pending"]?.intValue ?? 0
                row["failed"] = delivery?["failed"]?.intValue ?? 0
                row["consecutiveFailures"] = delivery?["consecutiveFailures"]?.intValue ?? 0
                row["oldestPendingAge"] = delivery?["oldestPendingAgeSeconds"]?.intValue.map { ConsoleView.duration(Int64($0)) }
                row["lastSuccess"] = ConsoleView.time(iso: delivery?["lastSuccessAt"]?.stringValue)
                row["lastFailure"] = ConsoleView.time(iso: delivery?["lastFailureAt"]?.stringValue)
                row["lastFailureReason"] = delivery?["lastFailure"]?.stringValue
                return row
            }
            return page
        }
    }
}
