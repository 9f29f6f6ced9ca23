import Foundation
import Hummingbird
import LivecastCore

/// The text of a bulk import, split into its rows: a JSON array of objects, or NDJSON (one object a line).
package struct ImportText: Sendable {
    /// How the rows are written.
    package enum Format: Sendable, Hashable {
        /// One JSON array whose elements are the rows.
        case jsonArray
        /// Newline-delimited JSON: each line a row (a final newline ends the last row; `\r\n` is taken as `\n`).
        case ndjson
    }

    /// How the rows are written.
    let format: Format
    /// The whole text.
    let bytes: [UInt8]
    /// Where each row lies in ``bytes``.
    let rows: [Range<Int>]

    /// How many rows it holds.
    package var count: Int { self.rows.count }

    /// Splits the text into rows. A JSON array's own structure is checked here (its brackets and commas); whether
    /// each row is JSON is found by ``decodeRows(as:)``, before any row is imported.
    /// - Throws: ``APIError`` `400 malformed_request` for a JSON array that does not parse.
    package init(_ bytes: [UInt8], format: Format) throws {
        self.format = format
        self.bytes = bytes
        switch format {
        case .jsonArray:
            guard let rows = RawJSON.topLevelElements(of: bytes) else { throw Self.notOneArray }
            self.rows = rows
        case .ndjson:
            var rows = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
                line.last == UInt8(ascii: "\r") ? line.startIndex..<(line.endIndex - 1) : line.startIndex..<line.endIndex
            }
            if rows.last?.isEmpty == true { rows.removeLast() }
            self.rows = rows
        }
    }

    /// The refusal of a JSON array that does not parse.
    private static var notOneArray: APIError {
        APIError.malformed("the body must be one JSON array of rows (NDJSON goes with Content-Type: application/x-ndjson)")
    }

    /// Decodes every row as the single request's body would be (``Request/decodeJSON(as:from:)``): each row that
    /// decodes, or its own error. Rows are decoded a chunk at a time by one decoder (one pass over the text), and a
    /// chunk that does not decode whole is decoded row by row, for each row's own error.
    /// - Throws: ``APIError`` `400 malformed_request` when a row of a JSON array is not JSON: the array does not parse,
    ///   so it is refused whole, before anything is imported. (A malformed NDJSON line is only that row's error.)
    func decodeRows<Row: Decodable>(as _: Row.Type) throws -> [Swift.Result<Row, APIError>] {
        var decoded: [Swift.Result<Row, APIError>] = []
        decoded.reserveCapacity(self.count)
        for start in stride(from: 0, to: self.count, by: Self.decodingChunk) {
            let chunk = start..<min(start + Self.decodingChunk, self.count)
            if self.joinsAsArray(chunk), let rows = try? JSONDecoder().decode([Row].self, from: Data(self.array(of: chunk))),
                rows.count == chunk.count
            {
                for (index, row) in zip(chunk, rows) {
                    do {
                        decoded.append(.success(try Request.checked(row, text: self.row(index))))
                    } catch let error as APIError {
                        decoded.append(.failure(error))
                    }
                }
                continue
            }
            for index in chunk {
                do {
                    decoded.append(.success(try Request.decodeJSON(as: Row.self, from: self.row(index))))
                } catch let error as APIError {
                    if self.format == .jsonArray, !Request.isJSON(Data(self.row(index))) { throw Self.notOneArray }
                    decoded.append(.failure(error))
                }
            }
        }
        return decoded
    }

    /// How many rows one decoder reads at once.
    private static let decodingChunk = 1_000

    /// Whether rows `chunk`, joined into one array, are its elements exactly: a JSON array's rows are; NDJSON lines
    /// are when each spans one value (two lines such as `{"a": [1` and `2]}` would otherwise join into one).
    private func joinsAsArray(_ chunk: Range<Int>) -> Bool {
        self.format == .jsonArray || chunk.allSatisfy { RawJSON.spansOneValue(self.row($0)) }
    }

    /// Rows `chunk` as the text of one JSON array.
    private func array(of chunk: Range<Int>) -> [UInt8] {
        var text: [UInt8] = [UInt8(ascii: "[")]
        for index in chunk {
            if index > chunk.lowerBound { text.append(UInt8(ascii: ",")) }
            text += self.bytes[self.rows[index]]
        }
        text.append(UInt8(ascii: "]"))
        return text
    }

    /// The text of row `index`.
    func row(_ index: Int) -> [UInt8] {
        Array(self.bytes[self.rows[index]])
    }
}
