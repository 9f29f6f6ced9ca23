import Foundation
import LivecastStore
import Testing

@testable import LivecastService

/// Apple's CSV files are read strictly (a changed format is an error, not wrong figures), and the export's days follow
/// Apple's rules: at most 30 days back, ending yesterday, the end after the start.
@Suite struct AppleExportCSVTests {
    @Test func theDocumentedColumnsAreReadInAnyOrderWithQuotesAndMinusOne() throws {
        let delivery =
            "\u{FEFF}Date (UTC),Push Type,Status,Count\r\n2026-03-01,Live Activity,Delivered,12\r\n\"2026-03-01T00:00:00Z\",liveactivity,discarded,\"3\"\n\n"
        guard case .deliveries(let rows) = try AppleExportCSV.rows(delivery, dataset: .deliveryMetrics, channelID: nil) else {
            Issue.record("not device pushes")
            return
        }
        #expect(
            rows == [
                AppleDeliveryDay(day: "2026-03-01", pushType: "liveactivity", status: "delivered", count: 12),
                AppleDeliveryDay(day: "2026-03-01", pushType: "liveactivity", status: "discarded", count: 3),
            ]
        )
        let channel = "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions\n2026-03-01,-1,-1,-1\n2026-03-02,4,7,2\n"
        guard case .broadcasts(let channelID, let days) = try AppleExportCSV.rows(channel, dataset: .channelMetrics, channelID: "Y2g=") else {
            Issue.record("not broadcasts")
            return
        }
        #expect(channelID == "Y2g=" && days.count == 2 && days[0].isWithheld && !days[1].isWithheld && days[1].delivered == 7)
    }

    @Test func anUnknownOrMissingColumnOrABadValueRefusesTheWholeFile() {
        let cases: [(String, AppleDataset, String)] = [
            ("Push Type,Status,Date (UTC),Count,Region\nliveactivity,delivered,2026-03-01,1,EU\n", .deliveryMetrics, "\"Region\""),
            ("Push Type,Status,Date (UTC)\nliveactivity,delivered,2026-03-01\n", .deliveryMetrics, "lacks the column \"Count\""),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,delivered,01/03/2026,1\n", .deliveryMetrics, "not a yyyy-MM-dd date"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,delivered,2026-03-01,many\n", .deliveryMetrics, "not a count"),
            ("Push Type,Status,Date (UTC),Count\nliveactivity,delivered,2026-03-01\n", .deliveryMetrics, "has 3 fields, not 4"),
            (
                "Date (UTC),Broadcasts Published,Broadcasts Delivered,Total Subscriptions\n2026-03-01,1,1,1\n", .applicationMetrics,
                "Unique Subscribers"
            ),
            ("", .channelMetrics, "empty"),
        ]
        for (text, dataset, message) in cases {
            #expect(throws: AppleExportError.self, "\(message)") { try AppleExportCSV.rows(text, dataset: dataset, channelID: nil) }
            do {
                _ = try AppleExportCSV.rows(text, dataset: dataset, channelID: nil)
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }

    @Test func exportsAskForThirtyDaysFirstThenFromTheDayBeforeTheLastThroughYesterday() throws {
        // 2026-03-15 12:00 UTC.
        let days = ExportDays(today: Date(timeIntervalSince1970: 1_773_576_000), backfill: 30)
        #expect(days.yesterday == "2026-03-14" && days.earliest == "2026-02-13")
        #expect(days.range(after: nil) == .init(from: "2026-02-13", through: "2026-03-14"))
        #expect(days.range(after: "2026-03-10") == .init(from: "2026-03-09", through: "2026-03-14"))
        #expect(days.range(after: "2026-03-13") == .init(from: "2026-03-12", through: "2026-03-14"))
        #expect(days.range(after: "2026-01-01") == .init(from: "2026-02-13", through: "2026-03-14"))
        #expect(days.range(after: "2026-03-14") == nil)
        for day in [-1, 0, 59, 365 * 30 + 7, 20_000] {
            #expect(ExportDays.day(ExportDays.text(day)) == day)
        }
        #expect(ExportDays.text(0) == "1970-01-01" && ExportDays.text(20_454) == "2026-01-01")
    }
}
