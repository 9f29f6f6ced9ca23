import Foundation
import Hummingbird
import LivecastCore

extension Console {
    /// `GET /console`: the app, its outbox, the last hour's pushes, channels against APNs' cap, dead letters, the
    /// reaper and what is wrong.
    func addOverviewRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "") { _, context, session in
            let answer = try await self.api.call(.get, "\(Self.appPath(session))/overview", context: context)
            guard answer.isSuccess else { return .refusal(answer, title: "Overview", section: .overview) }
            var page = ConsolePage(template: "overview", title: "Overview", section: .overview)
            page.model = Self.overviewModel(answer.json)
            return page
        }
    }

    static func overviewModel(_ json: JSONValue) -> [String: Any] {
        var outbox = ConsoleView.object(json["outbox"])
        if let age = json["outbox"]?["oldestAgeSeconds"]?.intValue { outbox["oldest"] = ConsoleView.duration(Int64(age)) }
        let used = json["channels"]?["used"]?.intValue ?? 0
        let limit = max(json["channels"]?["limit"]?.intValue ?? 1, 1)
        var reaper: [String: Any] = [:]
        if let at = ConsoleView.time(json["reaper"]?["lastRunAt"]?.intValue.map(Int64.init)) { reaper["at"] = at }
        if let summary = json["reaper"]?["summary"]?.stringValue { reaper["summary"] = summary }
        return [
            "app": ConsoleView.object(json),
            "outbox": outbox,
            "deadLetters": json["deadLetters"]?.intValue ?? 0,
            "channels": [
                "used": used,
                "limit": limit,
                "width": max(used == 0 ? 0 : 4, used * 200 / limit),
                "percent": String(format: "%.2f%%", Double(used) * 100 / Double(limit)),
            ],
            "pushes": Self.pushChart(json["lastHour"], reasons: json["failedByReason"]),
            "reaper": reaper,
            "starts": Self.startsModel(json["starts"]),
            "problems": json["problems"].items.compactMap(\.stringValue),
        ]
    }

    /// The last day's starts: how many went out, and the share the apps confirmed in time, with a gauge.
    private static func startsModel(_ json: JSONValue?) -> [String: Any] {
        var starts: [String: Any] = ["sent": json?["sent"]?.intValue ?? 0, "due": json?["due"]?.intValue ?? 0]
        if let ratio = json?["confirmationRatio"]?.doubleValue {
            starts["ratio"] = String(format: "%.0f%%", ratio * 100)
            starts["width"] = Int((ratio * 200).rounded())
            starts["low"] = ratio < 0.9
        }
        return starts
    }

    /// The last hour as twelve stacked bars (accepted below, failed above) in a 360 × 110 drawing.
    private static func pushChart(_ buckets: JSONValue?, reasons: JSONValue?) -> [String: Any] {
        let values = buckets.items.map { bucket in
            (start: Int64(bucket["start"]?.intValue ?? 0), sent: bucket["sent"]?.intValue ?? 0, failed: bucket["failed"]?.intValue ?? 0)
        }
        let highest = max(values.map { $0.sent + $0.failed }.max() ?? 0, 1)
        let bars: [[String: Any]] = values.enumerated().map { index, bucket in
            let sentHeight = bucket.sent * 100 / highest
            let failedHeight = bucket.failed * 100 / highest
            let label = (ConsoleView.time(bucket.start)?["text"] as? String) ?? ""
            return [
                "x": index * 30 + 3, "sent": bucket.sent, "failed": bucket.failed, "label": label,
                "sentY": 110 - sentHeight, "sentHeight": sentHeight,
                "failedY": 110 - sentHeight - failedHeight, "failedHeight": failedHeight,
            ]
        }
        return [
            "sent": values.reduce(0) { $0 + $1.sent },
            "failed": values.reduce(0) { $0 + $1.failed },
            "bars": bars,
            "from": "an hour ago",
            "reasons": ConsoleView.reasons(reasons),
        ]
    }
}
