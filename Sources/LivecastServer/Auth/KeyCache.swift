import Crypto
import Foundation
import LivecastStore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The callers of the keys that authenticated, by the SHA-256 of the whole key (never the key itself), so that a
/// request does not look its key up in PostgreSQL again.
///
/// A revocation reaches it at once: whatever changes or removes a key (the API, the CLI, a deleted app, an edit by
/// hand) notifies `livecast_api_keys` on commit (migration `0007`), and the cache forgets that key's prefix as soon as
/// the notification arrives, on every server. The cache answers only while its `LISTEN` connection is up: before it
/// listens, and from the moment that connection is lost until another listens, every key is looked up again and
/// nothing is remembered, as a revocation could go unnoticed meanwhile. A lookup that began before a notification
/// is not remembered either (``remember(_:for:since:)``).
final class KeyCache: Service, Sendable {
    /// The channel PostgreSQL notifies a key's prefix on (`*` for every key).
    static let channel = "livecast_api_keys"
    /// Beyond this many keys, the cache starts again empty.
    static let capacity = 100_000

    private struct Entry {
        var caller: APIKeys.Caller
        var prefix: String
    }

    private struct State {
        var callers: [SHA256.Digest: Entry] = [:]
        var isListening = false
        /// Counts what made remembered callers doubtful: notifications and losses of the `LISTEN` connection.
        var generation = 0
    }

    private let database: PostgresClient
    private let logger: Logger
    private let state = Mutex(State())

    init(database: PostgresClient, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    /// The caller a key authenticated as, while the cache listens for revocations.
    func caller(for presented: PresentedKey) -> APIKeys.Caller? {
        self.state.withLock { $0.isListening ? $0.callers[presented.digest]?.caller : nil }
    }

    /// What to pass to ``remember(_:for:since:)`` after a lookup: read before the lookup starts.
    var generation: Int { self.state.withLock { $0.generation } }

    /// Remembers the caller a lookup found, unless a notification came or the connection was lost since
    /// `generation` was read (the lookup may have read a key revoked meanwhile).
    func remember(_ caller: APIKeys.Caller, for presented: PresentedKey, since generation: Int) {
        guard let prefix = APIKeys.prefix(of: presented.text) else { return }
        self.state.withLock { state in
            guard state.isListening, state.generation == generation else { return }
            if state.callers.count >= Self.capacity { state.callers.removeAll() }
            state.callers[presented.digest] = Entry(caller: caller, prefix: prefix)
        }
    }

    /// Forgets the keys of `prefix` (`*`: every key), as a notification does.
    func forget(prefix: String) {
        self.state.withLock { state in
            state.generation += 1
            if prefix == "*" {
                state.callers.removeAll()
            } else {
                state.callers = state.callers.filter { $0.value.prefix != prefix }
            }
        }
    }

    /// Listens for changed keys until graceful shutdown, taking another connection when one is lost.
    func run() async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.database.withConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            self.setListening(true)
                            for try await notification in notifications { self.forget(prefix: notification.payload) }
                        }
                    }
                } catch {
                    if !Task.isCancelled {
                        self.logger.warning(
                            "lost the API keys' LISTEN connection; looking every key up until it is back",
                            metadata: ["error": "\(error)"]
                        )
                    }
                }
                self.setListening(false)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Starts or stops answering; either way, what was remembered is forgotten.
    private func setListening(_ isListening: Bool) {
        self.state.withLock { state in
            state.isListening = isListening
            state.generation += 1
            state.callers.removeAll()
        }
    }
}
