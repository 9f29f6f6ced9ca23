import Foundation
import HTTPTypes
import LivecastCore

/// What a bulk import did: each row's result or error, in the rows' order, and how many rows had each result.
package struct ImportReport: Sendable, Encodable {
    /// One row's outcome: `result` as the single registration answers it (`created`, `rotated`, …), or `error`.
    package struct Row: Sendable, Encodable {
        /// The row's position from 0: in the array, or the NDJSON line's number less one.
        package let index: Int
        /// What the registration did, when it was written.
        package let result: String?
        /// Why the row was refused, as the single registration would have answered.
        package let error: RowError?
    }

    /// A refused row: the single registration's error code, message and field, and the HTTP status it would have
    /// answered.
    package struct RowError: Sendable, Encodable {
        package let code: String
        package let message: String
        package let field: String?
        package let status: Int

        init(_ error: APIError) {
            self.code = error.code
            self.message = error.message
            self.field = error.field
            self.status = Int(error.status.code)
        }
    }

    /// Every row, in order.
    package private(set) var results: [Row] = []
    /// Rows by result (each result of the kind, zero included), and `failed`.
    package private(set) var counts: [String: Int]

    /// An empty report whose counts name `results`.
    init(results names: [String]) {
        self.counts = Dictionary(uniqueKeysWithValues: (names + ["failed"]).map { ($0, 0) })
    }

    /// How many rows were refused.
    package var failed: Int { self.counts["failed"] ?? 0 }

    mutating func add(_ index: Int, result: String) {
        self.results.append(Row(index: index, result: result, error: nil))
        self.counts[result, default: 0] += 1
    }

    mutating func add(_ index: Int, error: APIError) {
        self.results.append(Row(index: index, result: nil, error: RowError(error)))
        self.counts["failed", default: 0] += 1
    }
}

extension ImportReport {
    /// The report as `JSONEncoder.sorted` writes it, with the rows that were written put together by hand: encoding
    /// 10,000 rows through `JSONEncoder` took a large share of an import's server time (docs/PERFORMANCE.md). The
    /// counts and the refused rows
    /// (few, with messages to escape) still go through `JSONEncoder`.
    func json() throws -> [UInt8] {
        let encoder = JSONEncoder.sorted
        var json = Array(#"{"counts":"#.utf8)
        json += try encoder.encode(self.counts)
        json += #","results":["#.utf8
        for (position, row) in self.results.enumerated() {
            if position > 0 { json.append(UInt8(ascii: ",")) }
            if let result = row.result, row.error == nil, result.utf8.allSatisfy(Self.standsForItself) {
                json += #"{"index":\#(row.index),"result":"\#(result)"}"#.utf8
            } else {
                json += try encoder.encode(row)
            }
        }
        json += "]}".utf8
        return json
    }

    /// Whether a byte stands for itself inside a JSON string: printable ASCII other than `"` and `\`, and not `/`,
    /// which `JSONEncoder` would leave alone too but is kept out for simplicity.
    private static func standsForItself(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "/")
    }
}
