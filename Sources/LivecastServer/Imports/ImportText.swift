import Foundation
import LivecastCore

/// The text of a bulk import, split into its rows: a JSON array of objects, or NDJSON (one object a line).
public struct ImportText: Sendable {
    /// How the rows are written.
    public enum Format: Sendable, Hashable {
        /// One JSON array whose elements are the rows.
        case jsonArray
        /// Newline-delimited JSON: each line a row (a final newline ends the last row; `\r\n` is taken as `\n`).
        case ndjson
    }

    /// The whole text.
    let bytes: [UInt8]
    /// Where each row lies in ``bytes``.
    let rows: [Range<Int>]

    /// How many rows it holds.
    public var count: Int { self.rows.count }

    /// Splits the text into rows; a row is checked only when it is imported, so one malformed NDJSON line is that
    /// row's error alone.
    /// - Throws: ``APIError`` `400 malformed_request` for a JSON array that does not parse.
    public init(_ bytes: [UInt8], format: Format) throws {
        self.bytes = bytes
        switch format {
        case .jsonArray:
            guard (try? JSONDecoder().decode([Skipped].self, from: Data(bytes))) != nil else {
                throw APIError.malformed("the body must be one JSON array of rows (NDJSON goes with Content-Type: application/x-ndjson)")
            }
            self.rows = RawJSON.topLevelElements(of: bytes) ?? []
        case .ndjson:
            var rows = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
                line.last == UInt8(ascii: "\r") ? line.startIndex..<(line.endIndex - 1) : line.startIndex..<line.endIndex
            }
            if rows.last?.isEmpty == true { rows.removeLast() }
            self.rows = rows
        }
    }

    /// The text of row `index`.
    func row(_ index: Int) -> [UInt8] {
        Array(self.bytes[self.rows[index]])
    }

    /// Any JSON value, parsed and left alone.
    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}
