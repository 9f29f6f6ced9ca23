import Foundation

/// The one machine-readable line a mode prints on standard output, `MODE key=value …`, which scripts/bench.sh
/// parses; the first error's status and body go to standard error.
enum Summary {
    /// Prints `mode` and `fields`, then `errors=N`.
    static func print(_ mode: String, _ fields: [(String, String)], errors: Int, firstError: String?) {
        if let firstError {
            FileHandle.standardError.write(Data("\(mode): \(errors) errors; the first: \(firstError)\n".utf8))
        }
        let line = ([mode] + fields.map { "\($0.0)=\($0.1)" } + ["errors=\(errors)"]).joined(separator: " ")
        Swift.print(line)
    }

    /// Prints a load's line: `fields`, then its request count, rate and latency percentiles.
    static func print(_ mode: String, _ fields: [(String, String)], _ result: LoadResult, percentiles: [Double] = [50, 99, 99.9]) {
        let load = [("requests", String(result.succeeded)), ("rate", String(Int(result.rate)))] + result.percentileFields(percentiles)
        Self.print(mode, fields + load, errors: result.errors, firstError: result.firstError)
    }
}
