import Foundation
import LivecastCore

/// A server-rendered SVG bar chart of 30 days: per day, what Livecast sent beside what Apple says it delivered, the
/// flagged days shaded and marked, the days Apple withheld (too few subscribers) marked grey. No script: the console's
/// content security policy allows none inline, and the bars' `<title>`s are the tooltips.
struct DeliveryChart {
    /// One day's pair of bars.
    struct Day {
        let day: String
        /// What Livecast sent; `nil` for nothing.
        var livecast: Int64?
        /// What Apple says it delivered; `nil` where its export does not cover the day, or withheld it.
        var apple: Int64?
        var flagged = false
        /// Apple reported `-1`: too few subscribers.
        var withheld = false
    }

    /// The chart's element id.
    let id: String
    /// What the chart shows, for its accessible name.
    let label: String
    let days: [Day]

    private static let width = 720.0
    private static let height = 190.0
    private static let left = 44.0
    private static let top = 14.0
    private static let plotHeight = 136.0

    /// The chart as SVG markup; every text in it is escaped.
    var svg: String {
        let slot = (Self.width - Self.left - 8) / Double(max(self.days.count, 1))
        let bar = max(2, (slot - 4) / 2)
        let peak = max(1, self.days.map { max($0.livecast ?? 0, $0.apple ?? 0) }.max() ?? 1)
        let baseline = Self.top + Self.plotHeight
        func height(_ value: Int64) -> Double { Double(value) / Double(peak) * Self.plotHeight }
        let flagged = self.days.filter(\.flagged).count
        var parts: [String] = [
            #"<svg id="\#(Self.escaped(self.id))" class="delivery-chart" viewBox="0 0 \#(Int(Self.width)) \#(Int(Self.height))" role="img" "#
                + #"aria-label="\#(Self.escaped(self.label)): \#(flagged) flagged days" xmlns="http://www.w3.org/2000/svg">"#,
            #"<line x1="\#(Self.left)" y1="\#(baseline)" x2="\#(Self.width - 4)" y2="\#(baseline)" stroke="rgb(136,136,136)" stroke-width="1"/>"#,
            #"<text x="\#(Self.left - 6)" y="\#(Self.top + 4)" text-anchor="end" font-size="10" fill="rgb(136,136,136)">\#(peak)</text>"#,
            #"<text x="\#(Self.left - 6)" y="\#(baseline)" text-anchor="end" font-size="10" fill="rgb(136,136,136)">0</text>"#,
        ]
        for (index, day) in self.days.enumerated() {
            let x = Self.left + Double(index) * slot
            let name = Self.escaped(day.day)
            if day.flagged {
                parts.append(
                    #"<rect class="flagged" data-day="\#(name)" x="\#(Self.format(x))" y="\#(Self.top)" width="\#(Self.format(slot))" height="\#(Self.plotHeight)" fill="rgb(214,39,40)" fill-opacity="0.14"><title>\#(name): flagged, Apple's figures and Livecast's diverge</title></rect>"#
                )
                parts.append(
                    #"<text x="\#(Self.format(x + slot / 2))" y="\#(Self.top - 3)" text-anchor="middle" font-size="11" font-weight="bold" fill="rgb(214,39,40)">!</text>"#
                )
            }
            if let livecast = day.livecast, livecast > 0 {
                let h = height(livecast)
                parts.append(
                    #"<rect class="livecast" x="\#(Self.format(x + 2))" y="\#(Self.format(baseline - h))" width="\#(Self.format(bar))" height="\#(Self.format(h))" fill="rgb(76,120,168)"><title>\#(name): Livecast sent \#(livecast)</title></rect>"#
                )
            }
            if day.withheld {
                parts.append(
                    #"<rect class="withheld" x="\#(Self.format(x + 2 + bar))" y="\#(Self.format(baseline - 6))" width="\#(Self.format(bar))" height="6" fill="rgb(153,153,153)"><title>\#(name): too few subscribers, Apple shows no figures</title></rect>"#
                )
            } else if let apple = day.apple {
                let h = height(apple)
                parts.append(
                    #"<rect class="apple" x="\#(Self.format(x + 2 + bar))" y="\#(Self.format(baseline - h))" width="\#(Self.format(bar))" height="\#(Self.format(h))" fill="rgb(245,133,24)"><title>\#(name): Apple delivered \#(apple)</title></rect>"#
                )
            }
            if index % 5 == 0 || index == self.days.count - 1 {
                parts.append(
                    #"<text x="\#(Self.format(x + slot / 2))" y="\#(baseline + 14)" text-anchor="middle" font-size="10" fill="rgb(136,136,136)">\#(Self.escaped(String(day.day.suffix(5))))</text>"#
                )
            }
        }
        parts.append(
            #"<rect x="\#(Self.left)" y="\#(Self.height - 14)" width="10" height="10" fill="rgb(76,120,168)"/><text x="\#(Self.left + 14)" y="\#(Self.height - 5)" font-size="11" fill="currentColor">Livecast sent</text>"#
        )
        parts.append(
            #"<rect x="\#(Self.left + 110)" y="\#(Self.height - 14)" width="10" height="10" fill="rgb(245,133,24)"/><text x="\#(Self.left + 124)" y="\#(Self.height - 5)" font-size="11" fill="currentColor">Apple delivered</text>"#
        )
        parts.append(
            #"<rect x="\#(Self.left + 230)" y="\#(Self.height - 14)" width="10" height="10" fill="rgb(214,39,40)" fill-opacity="0.3"/><text x="\#(Self.left + 244)" y="\#(Self.height - 5)" font-size="11" fill="currentColor">flagged day</text>"#
        )
        parts.append(
            #"<rect x="\#(Self.left + 330)" y="\#(Self.height - 14)" width="10" height="10" fill="rgb(153,153,153)"/><text x="\#(Self.left + 344)" y="\#(Self.height - 5)" font-size="11" fill="currentColor">too few subscribers</text>"#
        )
        parts.append("</svg>")
        return parts.joined(separator: "\n")
    }

    /// The charts of a delivery report over `days` (oldest first): the total, then one per channel. Livecast's side
    /// of a channel is its accepted broadcasts times Apple's subscriptions for the day (what each subscriber should
    /// have received), or its broadcasts where Apple gave no subscriptions; the total adds its accepted device pushes.
    static func charts(_ report: JSONValue, days: [String]) -> (total: DeliveryChart, channels: [DeliveryChart]) {
        var total = Dictionary(uniqueKeysWithValues: days.map { ($0, Day(day: $0)) })
        var channels: [String: [String: Day]] = [:]
        for day in report["days"].items {
            guard let name = day["day"]?.stringValue, total[name] != nil else { continue }
            var dayTotal = total[name]!
            dayTotal.flagged = day["flagged"] == .bool(true)
            for pushType in day["pushTypes"].items {
                dayTotal.livecast = (dayTotal.livecast ?? 0) + Int64(pushType["livecast"]?["accepted"]?.intValue ?? 0)
                if let delivered = pushType["apple"]?["delivered"]?.intValue {
                    dayTotal.apple = (dayTotal.apple ?? 0) + Int64(delivered)
                } else if pushType["apple"]?.objectValue != nil {
                    dayTotal.apple = dayTotal.apple ?? 0
                }
            }
            for channel in day["channels"].items {
                guard let id = channel["channelId"]?.stringValue else { continue }
                let accepted = Int64(channel["livecast"]?["accepted"]?.intValue ?? 0)
                let subscriptions = channel["apple"]?["subscriptions"]?.intValue.map(Int64.init)
                var channelDay = Day(day: name)
                channelDay.livecast = accepted * (subscriptions ?? 1)
                channelDay.apple = channel["apple"]?["delivered"]?.intValue.map(Int64.init)
                channelDay.withheld = channel["apple"]?["tooFewSubscribers"] == .bool(true)
                channelDay.flagged = channel["flagged"] == .bool(true)
                channels[id, default: [:]][name] = channelDay
                dayTotal.livecast = (dayTotal.livecast ?? 0) + (channelDay.livecast ?? 0)
                if let apple = channelDay.apple { dayTotal.apple = (dayTotal.apple ?? 0) + apple }
            }
            total[name] = dayTotal
        }
        let totalChart = DeliveryChart(id: "chart-total", label: "All pushes, Livecast sent beside Apple delivered", days: days.map { total[$0]! })
        let channelCharts = channels.keys.sorted().enumerated().map { index, id in
            DeliveryChart(
                id: "chart-channel-\(index + 1)",
                label: "Channel \(id), Livecast sent beside Apple delivered",
                days: days.map { channels[id]?[$0] ?? Day(day: $0) }
            )
        }
        return (totalChart, channelCharts)
    }

    private static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// Text escaped for XML.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
