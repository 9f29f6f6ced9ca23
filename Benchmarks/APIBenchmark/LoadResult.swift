import Foundation
import Histogram
import NIOCore

/// What a load measured: latencies of the 2xx answers (HdrHistogram, microseconds), the errors, and how long it took.
struct LoadResult: Sendable {
    /// Latencies of the 2xx answers, in microseconds.
    private(set) var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
    /// 2xx answers.
    private(set) var succeeded = 0
    /// Requests answered otherwise, or not at all.
    private(set) var errors = 0
    /// The first error, `STATUS BODY`.
    private(set) var firstError: String?
    /// From the load's start to its last answer.
    var elapsed: Duration = .zero

    /// Counts `answer`, its latency measured from `origin`.
    mutating func record(_ answer: APIAnswer, since origin: NIODeadline) {
        guard answer.isSuccess else {
            self.recordError(answer.description)
            return
        }
        self.recordSuccess(from: origin, to: answer.receivedAt)
    }

    /// Counts a success that took from `start` to `end` (none when `end` came first).
    mutating func recordSuccess(from start: NIODeadline, to end: NIODeadline) {
        self.succeeded += 1
        _ = self.latency.record(UInt64(max(0, (end - start).nanoseconds) / 1_000))
    }

    /// Counts an error that is not an answer, such as a request never answered.
    mutating func recordError(_ description: String, count: Int = 1) {
        guard count > 0 else { return }
        self.errors += count
        if self.firstError == nil { self.firstError = description }
    }

    /// 2xx answers a second over ``elapsed``.
    var rate: Double {
        self.elapsed > .zero ? Double(self.succeeded) / self.elapsed.inSeconds : 0
    }

    /// `p50_ms=… p99_ms=… …` for the given percentiles (`50`, `99`, `99.9`), then `max_ms`.
    func percentileFields(_ percentiles: [Double]) -> [(String, String)] {
        percentiles.map { percentile in
            let name = "p" + String(format: "%g", percentile).replacingOccurrences(of: ".", with: "")
            return ("\(name)_ms", Self.milliseconds(self.latency.valueAtPercentile(percentile)))
        } + [("max_ms", Self.milliseconds(self.latency.max))]
    }

    /// Microseconds as milliseconds with two decimals.
    static func milliseconds(_ microseconds: UInt64) -> String {
        String(format: "%.2f", Double(microseconds) / 1_000)
    }
}
