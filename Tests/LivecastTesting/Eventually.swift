/// Waits for `condition` to hold: polls it every `interval` until it does, or fails after `timeout`. Each poll is
/// bound by the time left too, so a condition that never answers (a query on a stuck connection, a page that never
/// loads) fails the wait at its deadline instead of holding the test; it is cancelled then.
/// - Parameters:
///   - timeout: How long to wait. Defaults to 15 seconds.
///   - interval: The pause between two polls. Defaults to 20 ms.
///   - what: What is awaited, for the failure.
///   - condition: The check.
/// - Throws: ``WaitTimedOut`` when the condition does not hold in time; what the condition throws.
package func eventually(
    within timeout: Duration = .seconds(15),
    every interval: Duration = .milliseconds(20),
    _ what: String,
    _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await poll(condition, until: deadline) == true { return }
        guard ContinuousClock.now + interval < deadline else { throw WaitTimedOut(what: what, timeout: timeout) }
        try await Task.sleep(for: interval)
    }
}

/// A condition awaited with ``eventually(within:every:_:_:)`` did not hold in time.
package struct WaitTimedOut: Error, CustomStringConvertible {
    package var what: String
    package var timeout: Duration
    package var description: String { "waited \(self.timeout) in vain for \(self.what)" }
}

/// One poll of a condition, raced against the deadline. - Returns: `nil` when the deadline came first.
private func poll(_ condition: @escaping @Sendable () async throws -> Bool, until deadline: ContinuousClock.Instant) async throws -> Bool? {
    try await withThrowingTaskGroup(of: Bool?.self) { group in
        group.addTask { try await condition() }
        group.addTask {
            try? await Task.sleep(until: deadline)
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
}
