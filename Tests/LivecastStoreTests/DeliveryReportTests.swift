import LivecastStore
import Testing

/// How the delivery report compares, without PostgreSQL: only days both sides cover are judged, Apple's withheld
/// figures never, and a day is flagged past the threshold only.
@Suite struct DeliveryReportTests {
    @Test func onlyDaysBothSidesCoverAreJudgedAndOnlyPastTheThreshold() throws {
        var sources = DeliveryReport.Sources()
        sources.livecastSince = "2026-03-02"
        sources.exports = [
            .init(dataset: .deliveryMetrics, fetchedThrough: "2026-03-03"),
            .init(dataset: .channelMetrics, channelId: "A", fetchedThrough: "2026-03-03"),
        ]
        sources.appleDeliveries = [
            AppleDeliveryDay(day: "2026-03-01", pushType: "liveactivity", status: "delivered", count: 40),
            AppleDeliveryDay(day: "2026-03-02", pushType: "liveactivity", status: "delivered", count: 97),
            AppleDeliveryDay(day: "2026-03-03", pushType: "liveactivity", status: "delivered", count: 80),
            AppleDeliveryDay(day: "2026-03-03", pushType: "liveactivity", status: "discarded", count: 20),
        ]
        sources.pushes = ["liveactivity": ["2026-03-02": 100, "2026-03-03": 100, "2026-03-04": 5]]
        sources.appleBroadcasts = ["A": [AppleBroadcastDay(day: "2026-03-02", published: -1, delivered: -1, subscriptions: -1)]]
        sources.broadcasts = ["A": ["2026-03-02": .init(sent: 3, accepted: 3), "2026-03-03": .init(sent: 1, accepted: 1)]]
        let report = DeliveryReport.assemble(from: "2026-03-01", to: "2026-03-04", threshold: 0.05, sources)
        let days = Dictionary(uniqueKeysWithValues: report.days.map { ($0.day, $0) })

        // Before Livecast's records begin: Apple's side alone, not judged.
        let before = try #require(days["2026-03-01"]?.pushTypes.first)
        #expect(before.livecast == nil && !before.flagged)
        // 97 of 100 is within 5 %; the withheld channel is not compared.
        #expect(days["2026-03-02"]?.flagged == false)
        #expect(days["2026-03-02"]?.channels.first?.apple?.tooFewSubscribers == true)
        // 80 of 100, and a channel broadcast Apple exported nothing of: both flagged, with why.
        let diverged = try #require(days["2026-03-03"])
        #expect(diverged.flagged && diverged.pushTypes.first?.reasons == ["Apple delivered 80 of the 100 pushes APNs accepted (20 discarded)"])
        #expect(diverged.channels.first?.reasons == ["Apple published 0 broadcasts; APNs accepted 1 from Livecast"])
        // Not exported yet: Livecast's side alone, not judged.
        let unexported = try #require(days["2026-03-04"]?.pushTypes.first)
        #expect(unexported.apple == nil && unexported.livecast?.accepted == 5 && !unexported.flagged)
    }
}
