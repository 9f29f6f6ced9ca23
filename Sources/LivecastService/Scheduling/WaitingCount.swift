import Synchronization

/// How many of a service's workers wait for work, shared by the copies of the service value.
final class WaitingCount: Sendable {
    private let count = Atomic<Int>(0)

    /// The workers waiting now.
    var value: Int { self.count.load(ordering: .relaxed) }

    /// Counts `delta` more (or fewer) workers waiting.
    func add(_ delta: Int) { self.count.wrappingAdd(delta, ordering: .relaxed) }
}
