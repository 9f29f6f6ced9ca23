import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The game night's API client, as a backend that survives its servers' troubles: keep-alive HTTP/1.1 connections to
/// several `livecast serve` instances, opened when needed. A call answered `429`, `502`, `503` or `504`, or not at
/// all (the connection refused or lost, or no answer within the timeout), is tried again on the next instance after a
/// short backoff, a bounded number of times; every new try counts in ``retries``.
final class GameNightClient: Sendable {
    /// Where an instance listens.
    struct Endpoint: Sendable, Equatable {
        var host: String
        var port: Int
    }

    /// The last answer to a call, after its retries.
    struct Answer: Sendable {
        /// The HTTP status; `0` when no answer came.
        var status: Int
        /// The body as text, or why no answer came.
        var body: String
        /// When the answer was read, by the wall clock, in seconds since 1970 (``WireRecord/arrivedAt``'s clock).
        var answeredAt: Double
        /// How many tries the call took.
        var attempts: Int

        /// Whether the status is 2xx.
        var isSuccess: Bool { (200..<300).contains(self.status) }

        /// `STATUS BODY`, for error reports.
        var description: String { "\(self.status) \(self.body)" }
    }

    /// Tries made again, over every call.
    let retries = Atomic<Int>(0)

    private let eventLoop: any EventLoop
    private let apiKey: String
    private let maximumAttempts: Int
    private let timeout: TimeAmount
    private let state: Mutex<State>

    private struct State {
        /// Per instance, where it listens; `nil` while it is down.
        var endpoints: [Endpoint?]
        /// Per instance, connections with no request in flight, and where they lead.
        var idle: [[(endpoint: Endpoint, channel: any Channel)]]
    }

    /// A client for `instances` instances, none of them up yet (see ``setEndpoint(_:of:)``).
    /// - Parameters:
    ///   - apiKey: Sent as `Authorization: Bearer …` with every request.
    ///   - eventLoop: The loop every connection runs on.
    ///   - maximumAttempts: Tries per call, the first included. Defaults to `8`.
    ///   - timeout: How long a try waits for its answer. Defaults to 15 s (serve answers `503` after 10 s without
    ///     PostgreSQL).
    init(instances: Int, apiKey: String, on eventLoop: any EventLoop, maximumAttempts: Int = 8, timeout: Duration = .seconds(15)) {
        self.eventLoop = eventLoop
        self.apiKey = apiKey
        self.maximumAttempts = maximumAttempts
        self.timeout = TimeAmount(timeout)
        self.state = Mutex(State(endpoints: Array(repeating: nil, count: instances), idle: Array(repeating: [], count: instances)))
    }

    /// How many instances the client knows.
    var instances: Int { self.state.withLock { $0.endpoints.count } }

    /// Points `instance` at `endpoint`, or marks it down (`nil`); its idle connections are closed.
    func setEndpoint(_ endpoint: Endpoint?, of instance: Int) {
        let stale = self.state.withLock { state in
            state.endpoints[instance] = endpoint
            defer { state.idle[instance] = [] }
            return state.idle[instance].map(\.channel)
        }
        for channel in stale { channel.close(promise: nil) }
    }

    /// Sends `request` to `instance`, and again (to the next instances in turn) while it fails in a way worth
    /// retrying, at most ``maximumAttempts`` times in all.
    /// - Returns: The last answer.
    func call(_ request: APIRequest, on instance: Int) async -> Answer {
        let instances = self.instances
        var attempt = 1
        while true {
            var answer = await self.attempt(request, on: (instance + attempt - 1) % instances)
            answer.attempts = attempt
            guard Self.isWorthRetrying(answer.status), attempt < self.maximumAttempts else { return answer }
            self.retries.add(1, ordering: .relaxed)
            try? await Task.sleep(for: .milliseconds(min(200 << (attempt - 1), 2_000)))
            attempt += 1
        }
    }

    /// Closes every connection.
    func close() {
        for instance in 0..<self.instances { self.setEndpoint(nil, of: instance) }
    }

    /// A lost connection or timeout (`0`), a rate limit, and the statuses a server or gateway in trouble answers.
    private static func isWorthRetrying(_ status: Int) -> Bool {
        [0, 429, 502, 503, 504].contains(status)
    }

    /// One try on one instance: an idle connection to it, or a new one.
    private func attempt(_ request: APIRequest, on instance: Int) async -> Answer {
        let taken = self.state.withLock { state -> (Endpoint?, (any Channel)?) in
            guard let endpoint = state.endpoints[instance] else { return (nil, nil) }
            while let connection = state.idle[instance].popLast() {
                if connection.endpoint == endpoint, connection.channel.isActive { return (endpoint, connection.channel) }
                connection.channel.close(promise: nil)
            }
            return (endpoint, nil)
        }
        guard let endpoint = taken.0 else { return Self.noAnswer("instance \(instance) is down") }
        let channel: any Channel
        if let idle = taken.1 {
            channel = idle
        } else {
            do {
                channel = try await self.connect(to: endpoint)
            } catch {
                return Self.noAnswer("cannot connect to \(endpoint.host):\(endpoint.port): \(error)")
            }
        }
        let answer = await self.exchange(request, on: channel)
        let kept =
            answer.status != 0 && channel.isActive
            && self.state.withLock { state in
                guard state.endpoints[instance] == endpoint else { return false }
                state.idle[instance].append((endpoint, channel))
                return true
            }
        if !kept { channel.close(promise: nil) }
        return answer
    }

    private func connect(to endpoint: Endpoint) async throws -> any Channel {
        let headers = HTTPHeaders([
            ("host", "\(endpoint.host):\(endpoint.port)"),
            ("authorization", "Bearer \(self.apiKey)"),
            ("content-type", "application/json"),
        ])
        return try await ClientBootstrap(group: self.eventLoop)
            .connectTimeout(.seconds(3))
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(HTTPExchangeHandler(headers: headers))
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .get()
    }

    /// Sends `request` on `channel` and waits for its answer, at most ``timeout``, after which the connection is
    /// closed and the answer is `0`.
    private func exchange(_ request: APIRequest, on channel: any Channel) async -> Answer {
        let promise = channel.eventLoop.makePromise(of: Answer.self)
        let timeout = self.timeout
        channel.eventLoop.execute {
            guard let handler = try? channel.pipeline.syncOperations.handler(type: HTTPExchangeHandler.self), handler.isIdle else {
                promise.succeed(Self.noAnswer("the connection closed"))
                return
            }
            let isFinished = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let timer = channel.eventLoop.scheduleTask(in: timeout) {
                guard !isFinished.value else { return }
                isFinished.value = true
                promise.succeed(Self.noAnswer("no answer within \(timeout.nanoseconds / 1_000_000_000) s"))
                channel.close(promise: nil)
            }
            handler.send(request) { answer in
                timer.cancel()
                guard !isFinished.value else { return }
                isFinished.value = true
                promise.succeed(Answer(status: answer.status, body: answer.body, answeredAt: Date().timeIntervalSince1970, attempts: 1))
            }
        }
        return (try? await promise.futureResult.get()) ?? Self.noAnswer("the connection failed")
    }

    private static func noAnswer(_ why: String) -> Answer {
        Answer(status: 0, body: why, answeredAt: Date().timeIntervalSince1970, attempts: 1)
    }
}
