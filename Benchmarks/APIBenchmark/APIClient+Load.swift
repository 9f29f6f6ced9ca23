import NIOCore

extension APIClient {
    /// Sends `rate` requests a second for `duration`, open loop over every connection (see ``LoadRun``).
    /// - Parameter request: Makes request `i`, on the client's event loop.
    func openLoop(rate: Double, duration: Duration, request: @escaping @Sendable (Int) -> APIRequest) async throws -> LoadResult {
        try await self.run(.open(interval: 1e9 / rate), total: Int(rate * duration.inSeconds), request: request)
    }

    /// Sends requests back to back on every connection, closed loop, until `requests` are sent or `duration` is
    /// over, whichever comes first (see ``LoadRun``).
    /// - Parameter request: Makes request `i`, on the client's event loop.
    func closedLoop(requests: Int = .max, duration: Duration? = nil, request: @escaping @Sendable (Int) -> APIRequest) async throws -> LoadResult {
        try await self.run(.closed(until: duration.map { NIODeadline.now() + TimeAmount($0) }), total: requests, request: request)
    }

    private func run(_ pace: LoadRun.Pace, total: Int, request: @escaping @Sendable (Int) -> APIRequest) async throws -> LoadResult {
        let promise = self.eventLoop.makePromise(of: LoadResult.self)
        self.eventLoop.execute {
            LoadRun(
                on: self.eventLoop.assumeIsolated(),
                connections: self.connections.value.filter(\.isIdle),
                pace: pace,
                total: total,
                request: request,
                onFinish: { promise.succeed($0) }
            ).begin()
        }
        return try await promise.futureResult.get()
    }
}
