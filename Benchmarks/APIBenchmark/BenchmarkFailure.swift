/// A run that cannot go on: the server did not start, a mode's setup was refused, pushes did not arrive.
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
