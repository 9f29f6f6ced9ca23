import Foundation
import Hummingbird
import LivecastCore

extension Console {
    /// `GET /console/delivery-report` (backend, as in the API): the last 30 days (today's has Livecast's side only
    /// until Apple publishes it, the next day) of Apple's figures beside
    /// Livecast's, drawn (the total and each channel), the flagged days listed with why, and the exports' errors.
    func addDeliveryReportRoutes(to pages: RouterGroup<APIRequestContext>) {
        self.page(pages, "delivery-report") { _, context, session in
            let today = AppleMetricsController.day(Date())
            let days = ((today - 29)...today).map(AppleMetricsController.text)
            let query = InProcessAPI.query([("from", days.first), ("to", days.last)])
            let answer = try await self.api.call(.get, "\(Self.appPath(session))/delivery-report\(query)", context: context)
            guard answer.isSuccess else { return .refusal(answer, title: "Delivery report", section: .deliveryReport) }
            var page = ConsolePage(template: "deliveryReport", title: "Delivery report", section: .deliveryReport)
            page.model = Self.deliveryReportModel(answer.json, days: days)
            return page
        }
    }

    static func deliveryReportModel(_ report: JSONValue, days: [String]) -> [String: Any] {
        let (total, channels) = DeliveryChart.charts(report, days: days)
        var flagged: [[String: Any]] = []
        var withheld: [[String: Any]] = []
        for day in report["days"].items.reversed() {
            let name = day["day"]?.stringValue ?? ""
            for channel in day["channels"].items {
                let id = channel["channelId"]?.stringValue ?? ""
                if channel["apple"]?["tooFewSubscribers"] == .bool(true) {
                    withheld.append(["day": name, "subject": "channel \(id)"])
                }
                for reason in channel["reasons"].items.compactMap(\.stringValue) {
                    flagged.append(["day": name, "subject": "channel \(id)", "reason": reason])
                }
            }
            for pushType in day["pushTypes"].items {
                for reason in pushType["reasons"].items.compactMap(\.stringValue) {
                    flagged.append(["day": name, "subject": "\(pushType["pushType"]?.stringValue ?? "") pushes", "reason": reason])
                }
            }
        }
        let exports = report["appleExports"].items
        let failing: [[String: Any]] = exports.compactMap { export in
            guard let error = export["lastError"]?.stringValue else { return nil }
            var row: [String: Any] = ["dataset": export["dataset"]?.stringValue ?? "", "error": error]
            if let channel = export["channelId"]?.stringValue { row["channel"] = channel }
            if let at = ConsoleView.time(iso: export["lastErrorAt"]?.stringValue) { row["at"] = at }
            return row
        }
        let through = exports.compactMap { $0["fetchedThrough"]?.stringValue }.min()
        var model: [String: Any] = [
            "from": days.first ?? "",
            "to": days.last ?? "",
            "totalChart": total.svg,
            "channelCharts": channels.map { ["label": $0.label, "svg": $0.svg] as [String: Any] },
            "flaggedDays": flagged,
            "withheld": withheld,
            "failing": failing,
            "exported": !exports.isEmpty,
        ]
        if let through { model["through"] = through }
        return model
    }
}
