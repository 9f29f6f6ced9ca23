import Foundation
import LivecastCore
import Testing

@testable import LivecastServer

/// An import's answer is written partly by hand; it must be the JSON `JSONEncoder.sorted` writes for the report.
@Suite struct ImportReportTests {
    @Test func theHandWrittenJSONIsTheEncodersJSON() throws {
        var report = ImportReport(results: ["created", "rotated", "unchanged"])
        report.add(0, result: "created")
        report.add(1, error: APIError.invalid(#"token "zz/é" must be hex"#, field: "token"))
        report.add(2, result: "rotated")
        report.add(3, error: APIError.malformed("the row is not valid JSON"))
        report.add(4, result: "unchanged")
        let json = try report.json()
        #expect(json == Array(try JSONEncoder.sorted.encode(report)))
        #expect(String(decoding: json, as: UTF8.self).contains(#"{"index":2,"result":"rotated"}"#))
    }
}
