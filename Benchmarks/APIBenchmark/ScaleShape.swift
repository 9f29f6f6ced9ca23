import ArgumentParser
import Foundation

/// How one run of the scale benchmark is deployed: how many `livecast serve` share the database, and how many HTTP/2
/// connections each opens to APNs (`--apns-connections`).
struct ScaleShape: Sendable, Equatable {
    var instances: Int
    var connections: Int
}

/// A comma-separated list of counts on the command line, `1,2,3`, or `none` for an empty list.
struct ScaleCounts: ExpressibleByArgument, Sendable {
    var values: [Int]

    init(_ values: [Int]) {
        self.values = values
    }

    init?(argument: String) {
        guard argument != "none" else {
            self.values = []
            return
        }
        var values: [Int] = []
        for part in argument.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = Int(part.trimmingCharacters(in: .whitespaces)), value > 0 else { return nil }
            values.append(value)
        }
        self.values = values
    }

    var defaultValueDescription: String {
        self.values.isEmpty ? "none" : self.values.map(String.init).joined(separator: ",")
    }
}
