import LivecastStore
import Logging
import NIOCore
import NIOPosix
package import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether PostgreSQL answers, so that requests fail fast instead of hanging while it is unreachable.
///
/// A probe asks `SELECT 1` twice a second over a connection of its own. While the database answers,
/// ``guarding(_:)`` runs a request's work as is. It counts as unreachable as soon as a probe is refused (nothing
/// listens at the server's address, or the server is shutting down or starting up; a probe unanswered after
/// 300 ms asks whether a bare connection is refused), or when probes go unanswered and nothing has been answered
/// for thirty seconds (a frozen server or a lost network; a busy machine answers late, so it takes longer to tell
/// apart). An answer is a probe's or any request's work that succeeded.
/// Then the work still waiting is cancelled and answered `503 database_unavailable` (work that also calls APNs goes
/// on, answered at once), and so is new work until a probe is answered again. Cancelled work still queued ends at
/// once; work already in a group commit answers what the commit did, and, still running a second later, that
/// nobody can tell whether it was kept: it is never told "nothing was changed" for a write that was kept. PostgresNIO's pool would otherwise queue a request
/// for up to a minute while it cannot connect, and a query on a connection to a frozen server waits for as long as
/// TCP allows.
///
/// Work that takes longer than ``waitTimeout`` (waiting for a pool connection while all are busy, then its queries)
/// is answered `503 database_unavailable` too, and cancelled: a request waiting for a connection withdraws. Late work is
/// looked for ten times a second, while the watch runs.
package final class DatabaseWatch: Service, Sendable {
    /// How often the database is probed.
    package static let probeInterval: Duration = .milliseconds(500)
    /// How long a probe may take before it counts as unanswered.
    package static let probeTimeout: Duration = .seconds(2)
    /// How long a probe waits for its answer before it also asks whether connections are refused (a stopped server
    /// is told at once, without waiting out ``probeTimeout``).
    package static let refusalCheckDelay: Duration = .milliseconds(300)
    /// How long without any answer before the database counts as unreachable after an unanswered probe.
    package static let unansweredPatience: Duration = .seconds(30)

    /// How long a request's work may wait on the database, for a pool connection and its queries, before it is
    /// answered `503 database_unavailable`.
    package let waitTimeout: Duration

    private let client: PostgresClient
    /// Where the server listens, to tell one that refuses connections from one that is slow.
    private let address: (host: String?, port: Int?, unixSocketPath: String?)
    private let logger: Logger
    private let state: Mutex<DatabaseWatchStateMachine<Waiting>>

    /// Work waiting on the database: how to answer it at once, and the task doing it (cancelled when it is late or
    /// the database unreachable).
    private struct Waiting {
        var answer: @Sendable (any Error) -> Void
        var task: Task<Void, Never>?
    }

    /// How long bounded work cancelled because the database is unreachable has to end before it is answered that
    /// nobody can tell whether it was kept: work still queued withdraws at once, but a group commit it is part of
    /// may already be committing.
    static let abandonedWorkGrace: Duration = .seconds(1)

    /// - Parameters:
    ///   - database: The configuration of the service's PostgreSQL; the probe connects with it on its own.
    ///   - waitTimeout: How long a request's work may wait on the database. Defaults to 10 seconds.
    package init(database: PostgresClient.Configuration, waitTimeout: Duration = .seconds(10), logger: Logger) {
        self.waitTimeout = waitTimeout
        var configuration = database
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 1
        configuration.options.connectTimeout = Self.probeTimeout
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.address = (database.host, database.port, database.unixSocketPath)
        self.logger = logger
        self.state = Mutex(
            DatabaseWatchStateMachine(now: .now, unansweredPatience: Self.unansweredPatience, abandonedWorkGrace: Self.abandonedWorkGrace)
        )
    }

    /// Whether the last probe was answered (`true` until the first one says otherwise).
    package var isReachable: Bool { self.state.withLock { $0.isReachable } }

    /// Why the last probe failed, while the database is unreachable.
    package var lastError: String? { self.state.withLock { $0.unreachableReason } }

    /// How often work past ``waitTimeout`` is looked for.
    static let lateWorkInterval: Duration = .milliseconds(100)

    /// Probes twice a second, and answers late work ten times a second, until graceful shutdown.
    package func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask {
                await cancelWhenGracefulShutdown {
                    while (try? await Task.sleep(for: Self.lateWorkInterval)) != nil { self.answerLateWork() }
                }
            }
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
    /// cancels bounded work, so that what it has not yet sent is never written once PostgreSQL is back (it withdraws
    /// from the pool's queue and the group commit's) and throws ``APIError/databaseUnavailable`` as it ends, unless it
    /// was kept or its commit is in doubt (``APIError/commitInDoubt``, also after ``abandonedWorkGrace``); unbounded
    /// work throws ``APIError/databaseUnavailable`` at once and goes on, its result dropped. Bounded work that takes longer than ``waitTimeout`` is cancelled too, and
    /// throws ``APIError/databaseTimedOut``.
    /// - Parameters:
    ///   - isBounded: Whether ``waitTimeout`` applies; work that also waits on APNs has APNs' timeouts instead.
    ///   - work: The work.
    func guarding<Result: Sendable>(
        isBounded: Bool = true,
        _ work: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer(continuation)
            let deadline = isBounded ? ContinuousClock.now + self.waitTimeout : nil
            let waiting = Waiting(answer: { answer.resume(throwing: $0) })
            guard let ticket = self.state.withLock({ $0.admit(waiting, deadline: deadline) }) else {
                answer.resume(throwing: APIError.databaseUnavailable)
                return
            }
            // The work runs in a task of its own, so that the request can be answered while it still waits, with the
            // request's executor preference (its connection's loop, `ConnectionLoopHTTP1Channel`), which a new task
            // does not inherit (docs/PERFORMANCE.md).
            let task = Task(executorPreference: currentTaskExecutorPreference()) {
                do {
                    let result = try await work()
                    self.state.withLock { $0.succeeded(ticket, at: .now) }
                    answer.resume(returning: result)
                } catch {
                    // Cancelled because the database is unreachable: unless its commit was in doubt, nothing of it
                    // was written (a failed group commit is rolled back).
                    let abandoned = self.state.withLock { $0.failed(ticket) } && !(error is CommitInDoubt)
                    answer.resume(throwing: abandoned ? APIError.databaseUnavailable : error)
                }
            }
            self.state.withLock { $0.update(ticket) { $0.task = task } }
        }
    }

    /// Answers ``APIError/databaseTimedOut`` to the work past its deadline, and cancels it (a request waiting for a
    /// pool connection withdraws).
    /// Also answers bounded work cancelled because the database is unreachable, and still running after
    /// ``abandonedWorkGrace``, that nobody can tell whether it was kept (``APIError/commitInDoubt``).
    private func answerLateWork() {
        let found = self.state.withLock { $0.takeLateWork(at: .now) }
        for waiting in found.late {
            waiting.answer(APIError.databaseTimedOut)
            waiting.task?.cancel()
        }
        for waiting in found.inDoubt { waiting.answer(APIError.commitInDoubt) }
    }

    private typealias Probe = DatabaseWatchStateMachine<Waiting>.Probe

    /// Asks `SELECT 1`, giving it ``probeTimeout``. PostgresNIO's pool keeps a query waiting while it cannot connect,
    /// so an unanswered probe then tries a bare connection: refused means down.
    private func probe() async -> Probe {
        let probe = await self.query()
        guard case .unanswered = probe, await self.connectionIsRefused() else { return probe }
        return .refused("connections to PostgreSQL are refused")
    }

    private func query() async -> Probe {
        let probe: Probe? = try? await withCheckedThrowingContinuation { continuation in
            let answer = OneAnswer<Probe>(continuation)
            let deadline = Task {
                try await Task.sleep(for: Self.probeTimeout)
                answer.resume(returning: Self.unanswered)
            }
            let refusalCheck = Task {
                try await Task.sleep(for: Self.refusalCheckDelay)
                if await self.connectionIsRefused() { answer.resume(returning: .refused("connections to PostgreSQL are refused")) }
            }
            Task {
                defer {
                    deadline.cancel()
                    refusalCheck.cancel()
                }
                do {
                    try await self.client.ping(logger: self.logger)
                    answer.resume(returning: .answered)
                } catch let error as PSQLError where error.code == .server {
                    // The server answered, if only to refuse (too many clients, say), unless it is going away.
                    let state = error.serverInfo?[.sqlState] ?? ""
                    let goingAway = state.hasPrefix("08") || state.hasPrefix("57P")
                    answer.resume(returning: goingAway ? .refused(String(reflecting: error)) : .answered)
                } catch {
                    // A connection that failed or timed out: whether it was refused is for a bare connection to say.
                    answer.resume(returning: Self.unanswered)
                }
            }
        }
        return probe ?? Self.unanswered
    }

    /// Whether a bare connection to the server's address is refused (nothing listens there). A connection that opens,
    /// or is merely slow to, is not a refusal.
    private func connectionIsRefused() async -> Bool {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connectTimeout(.seconds(2))
        do {
            let channel =
                if let path = self.address.unixSocketPath {
                    try await bootstrap.connect(unixDomainSocketPath: path).get()
                } else {
                    try await bootstrap.connect(host: self.address.host ?? "localhost", port: self.address.port ?? 5432).get()
                }
            try? await channel.close()
            return false
        } catch {
            return Self.isRefusal(error)
        }
    }

    private static func isRefusal(_ error: any Error) -> Bool {
        if let error = error as? IOError { return error.errnoCode == ECONNREFUSED || error.errnoCode == ENOENT }
        if let error = error as? NIOConnectionError { return error.connectionErrors.contains { Self.isRefusal($0.error) } }
        return false
    }

    /// A probe with no answer within ``probeTimeout``.
    private static let unanswered = Probe.unanswered("PostgreSQL did not answer a probe within \(probeTimeout)")

    /// Records a probe's outcome; on the way to unreachable, cancels bounded work (withdrawn from the pool's queue
    /// or the group commit's, it ends at once and answers 503; already in a group commit, it answers what the commit
    /// did, ``abandonedWorkGrace``) and answers unbounded work now (work that also calls APNs goes on: what APNs did
    /// is still recorded once PostgreSQL is back).
    private func record(_ probe: Probe) {
        let after = self.state.withLock { $0.record(probe, at: .now) }
        switch after.change {
        case .becameUnreachable(let error):
            self.logger.error("PostgreSQL is unreachable; requests are answered 503", metadata: ["error": "\(error)"])
        case .becameReachable: self.logger.info("PostgreSQL answers again")
        case nil: break
        }
        for work in after.cancel { work.task?.cancel() }
        for work in after.answerUnavailable { work.answer(APIError.databaseUnavailable) }
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
