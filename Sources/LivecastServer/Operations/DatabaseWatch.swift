import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether PostgreSQL answers, so that requests fail fast instead of hanging while it is unreachable.
///
/// A probe asks `SELECT 1` once a second over a connection of its own (so a busy pool is not mistaken for an
/// outage) and gives it a second to answer. While the database answers, ``guarding(_:)`` runs a request's work as
/// is; once a probe goes unanswered, the work still waiting is answered `503 database_unavailable` at once, and so
/// is new work until a probe is answered again. PostgresNIO's pool would otherwise queue a request for up to a
/// minute while it cannot connect, and a query on a connection to a frozen server waits for as long as TCP allows.
public final class DatabaseWatch: Service, Sendable {
    /// How often the database is probed, and how long a probe may take before it counts as unanswered.
    public static let probeInterval: Duration = .seconds(1)

    private let client: PostgresClient
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var isReachable = true
        var lastError: String?
        /// The work waiting on the database, by ticket, each with how to answer it at once.
        var waiting: [Int: @Sendable () -> Void] = [:]
        var nextTicket = 0
    }

    /// - Parameter database: The configuration of the service's PostgreSQL; the probe connects with it on its own.
    public init(database: PostgresClient.Configuration, logger: Logger) {
        var configuration = database
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 1
        configuration.options.connectTimeout = Self.probeInterval
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// Whether the last probe was answered (`true` until the first one says otherwise).
    public var isReachable: Bool { self.state.withLock { $0.isReachable } }

    /// Why the last probe failed, while the database is unreachable.
    public var lastError: String? { self.state.withLock { $0.isReachable ? nil : $0.lastError } }

    /// Probes once a second until graceful shutdown.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    self.record(await self.probe())
                    try? await Task.sleep(for: Self.probeInterval)
                }
            }
            group.cancelAll()
        }
    }

    /// Runs `work`, which uses the database, unless the database is unreachable or becomes so while it waits: then
    /// throws ``APIError/databaseUnavailable`` at once (the work goes on in the background until PostgreSQL answers
    /// or gives up, and its result is dropped).
    /// - Parameter timeout: When given, also how long the work may take before that error.
    func guarding<Result: Sendable>(
        timeout: Duration? = nil,
        _ work: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer(continuation)
            let ticket: Int? = self.state.withLock { state in
                guard state.isReachable else { return nil }
                state.nextTicket += 1
                state.waiting[state.nextTicket] = { answer.resume(throwing: APIError.databaseUnavailable) }
                return state.nextTicket
            }
            guard let ticket else {
                answer.resume(throwing: APIError.databaseUnavailable)
                return
            }
            if let timeout {
                Task {
                    try? await Task.sleep(for: timeout)
                    answer.resume(throwing: APIError.databaseUnavailable)
                }
            }
            Task {
                do {
                    let result = try await work()
                    self.state.withLock { _ = $0.waiting.removeValue(forKey: ticket) }
                    answer.resume(returning: result)
                } catch {
                    self.state.withLock { _ = $0.waiting.removeValue(forKey: ticket) }
                    answer.resume(throwing: error)
                }
            }
        }
    }

    /// - Returns: `nil` when `SELECT 1` was answered within ``probeInterval``, else why not.
    private func probe() async -> String? {
        let failure: String?? = try? await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer<String?>(continuation)
            let query = Task {
                do {
                    try await self.client.query("SELECT 1", logger: self.logger)
                    answer.resume(returning: nil)
                } catch {
                    answer.resume(returning: String(reflecting: error))
                }
            }
            Task {
                try? await Task.sleep(for: Self.probeInterval)
                answer.resume(returning: "no answer to SELECT 1 within \(Self.probeInterval)")
                query.cancel()
            }
        }
        return failure ?? "the probe failed"
    }

    private func record(_ error: String?) {
        let (waiting, changed) = self.state.withLock { state -> ([@Sendable () -> Void], Bool) in
            let changed = state.isReachable != (error == nil)
            state.isReachable = error == nil
            state.lastError = error
            guard error != nil else { return ([], changed) }
            defer { state.waiting = [:] }
            return (Array(state.waiting.values), changed)
        }
        if changed, let error {
            self.logger.error("PostgreSQL is unreachable; requests are answered 503", metadata: ["error": "\(error)"])
        } else if changed {
            self.logger.info("PostgreSQL answers again")
        }
        for fail in waiting { fail() }
    }
}

/// A continuation resumed by whichever of several racing tasks answers first; later answers are dropped.
private final class OneAnswer<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning value: Value) {
        self.take()?.resume(returning: value)
    }

    func resume(throwing error: any Error) {
        self.take()?.resume(throwing: error)
    }

    private func take() -> CheckedContinuation<Value, any Error>? {
        self.continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
    }
}
