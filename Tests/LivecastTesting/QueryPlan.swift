import Foundation
import PostgresNIO

/// The output of `EXPLAIN` (`ANALYZE` for what was read, with `BUFFERS` for ``pages``), for tests that bound what a
/// statement reads or which plan it keeps.
package struct QueryPlan: CustomStringConvertible, Sendable {
    /// The plan's lines, as PostgreSQL printed them.
    package let lines: [String]

    /// Reads the plan from the rows of an `EXPLAIN` statement.
    package init(_ rows: PostgresRowSequence) async throws {
        var lines: [String] = []
        for try await line in rows.decode(String.self) { lines.append(line) }
        self.lines = lines
    }

    /// The rows the statement's top node gave.
    package var rows: Int? {
        self.lines.first.flatMap { Self.number(after: "rows=", in: Self.actual(of: $0)) }
    }

    /// The pages the whole statement read, from the buffers or from disk (its first `Buffers:` line).
    package var pages: Int? {
        self.lines.first { $0.contains("Buffers:") }.map {
            (Self.number(after: "hit=", in: $0) ?? 0) + (Self.number(after: "read=", in: $0) ?? 0)
        }
    }

    /// The rows the statement's scans of `table` gave, over all their loops.
    package func rowsRead(from table: String) -> Int {
        self.lines.filter { $0.contains(" on \(table) ") }.reduce(0) { total, line in
            let actual = Self.actual(of: line)
            return total + (Self.number(after: "rows=", in: actual) ?? 0) * (Self.number(after: "loops=", in: actual) ?? 1)
        }
    }

    package var description: String { self.lines.joined(separator: "\n") }

    /// What a node's line says it did (`actual … rows=… loops=…`), apart from the planner's estimates before it.
    private static func actual(of line: String) -> Substring {
        line.split(separator: "(actual").last ?? ""
    }

    /// The number after `label` in `text`, if any.
    private static func number(after label: String, in text: some StringProtocol) -> Int? {
        guard let start = text.range(of: label)?.upperBound else { return nil }
        return Int(text[start...].prefix { $0.isNumber })
    }
}
