import Foundation

/// The scale benchmark's table, one row per run: its shape, the seconds from the 202 to the last follower's push on
/// the wire, pushes a second and their ratio to the baseline run's, each instance's peak resident memory, and what
/// the wire judge counted against it.
struct ScaleTable: Sendable {
    let results: [ScaleRun.Result]
    /// The run the ratios compare with: one instance with the sweep's connections.
    let baseline: ScaleShape

    private static let columns: [(title: String, width: Int)] = [
        ("instances", 9), ("connections", 11), ("followers", 9), ("seconds", 8), ("pushes/s", 9), ("ratio", 6),
        ("peak-RSS-MiB", 16), ("lost", 7), ("violations", 10),
    ]

    /// Prints the header and the rows on standard output.
    func print() {
        Swift.print(Self.line(Self.columns.map(\.title)))
        let baseRate = self.results.first { $0.shape == self.baseline }?.pushesPerSecond
        for result in self.results {
            let rate = result.pushesPerSecond
            var ratio = "-"
            if let rate, let baseRate { ratio = String(format: "%.2f", rate / baseRate) }
            let peaks = result.peakResidentBytes.map { $0.map { String($0 / 1_048_576) } ?? "?" }.joined(separator: "/")
            Swift.print(
                Self.line([
                    String(result.shape.instances), String(result.shape.connections), String(result.verdict.followers),
                    result.seconds.map { String(format: "%.2f", $0) } ?? "-", rate.map { String(Int($0)) } ?? "-", ratio, peaks,
                    String(result.verdict.lost), String(result.verdict.violations),
                ])
            )
        }
    }

    /// The cells, right-aligned to their columns' widths (the peaks left-aligned, as they vary in length).
    private static func line(_ cells: [String]) -> String {
        zip(cells, Self.columns).map { cell, column in
            let padding = String(repeating: " ", count: max(0, column.width - cell.count))
            return column.title == "peak-RSS-MiB" ? cell + padding : padding + cell
        }.joined(separator: "  ")
    }
}
