/// Runs `operation` until `deadline`: its result, or `nil` when the deadline comes first (or the caller is
/// cancelled). The operation is then cancelled, and this returns once it has ended, so it must end promptly when
/// cancelled: an AsyncHTTPClient request or response body does (its connection is closed).
func withDeadline<Result: Sendable>(
    _ deadline: ContinuousClock.Instant,
    _ operation: @escaping @Sendable () async -> Result
) async -> Result? {
    await withTaskGroup(of: Result?.self) { group in
        group.addTask { await operation() }
        group.addTask {
            try? await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}
