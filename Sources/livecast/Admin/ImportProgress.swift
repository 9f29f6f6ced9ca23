import Foundation

/// The progress of an import on stderr: rows done of the total and rows a second, rewritten in place on a terminal
/// and one line per batch otherwise (a log, a pipe).
struct ImportProgress: Sendable {
    private let total: Int
    private let started = ContinuousClock.now
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(total: Int) {
        self.total = total
    }

    /// Shows that `rowsDone` rows are done.
    func show(rowsDone: Int) {
        let line = "\(rowsDone)/\(self.total) rows, \(self.rate(rows: rowsDone)) rows/s"
        Self.write(self.isTerminal ? "\r\u{1B}[K\(line)" : "\(line)\n")
    }

    /// Ends the line rewritten in place.
    func finish() {
        if self.isTerminal { Self.write("\n") }
    }

    /// `1.2 s (8300 rows/s)`.
    func summary(rows: Int) -> String {
        "\(Self.seconds(ContinuousClock.now - self.started).formatted(.number.precision(.fractionLength(1)))) s (\(self.rate(rows: rows)) rows/s)"
    }

    private func rate(rows: Int) -> Int {
        let seconds = Self.seconds(ContinuousClock.now - self.started)
        return seconds > 0 ? Int(Double(rows) / seconds) : 0
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
