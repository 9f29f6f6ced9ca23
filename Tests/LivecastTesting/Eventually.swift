/// Polls `condition` every 20 ms until it holds, or fails after `timeout`.
package func eventually(
    within timeout: Duration = .seconds(15),
    _ what: String,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    struct TimedOut: Error, CustomStringConvertible { var description: String }
    throw TimedOut(description: "timed out waiting for \(what)")
}
