import Foundation
import Hummingbird
import Synchronization

/// A tiny HTTP server that answers `503` with `Retry-After: 1` a number of times, then `201`: Livecast answers so
/// only while PostgreSQL is down, which this stands in for.
final class UnavailableStub: Sendable {
    private struct Seen {
        var requests = 0
        var lastHeaders: [String: String] = [:]
    }

    private final class Shared: Sendable {
        let seen = Mutex(Seen())
    }

    let url: URL
    private let shared: Shared
    private let task: Task<Void, any Error>

    var requests: Int { self.shared.seen.withLock { $0.requests } }
    /// The last request's headers, by lowercased name.
    var lastHeaders: [String: String] { self.shared.seen.withLock { $0.lastHeaders } }

    private init(url: URL, shared: Shared, task: Task<Void, any Error>) {
        self.url = url
        self.shared = shared
        self.task = task
    }

    /// Starts the stub on a free loopback port.
    static func start(failures: Int) async throws -> UnavailableStub {
        let state = Shared()
        let router = Router()
        router.put("/v1/apps/{bundle}/push-to-start-tokens/{device}/{type}") { request, _ -> Response in
            let count = state.seen.withLock { seen in
                seen.requests += 1
                seen.lastHeaders = Dictionary(request.headers.map { ($0.name.canonicalName.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
                return seen.requests
            }
            if count <= failures {
                return Response(
                    status: .serviceUnavailable,
                    headers: [.retryAfter: "1", .contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: #"{"error":{"code":"database_unavailable","message":"down"}}"#))
                )
            }
            return Response(status: .created, body: .init(byteBuffer: ByteBuffer(string: #"{"result":"created"}"#)))
        }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            }
        )
        let task = Task { try await app.runService() }
        guard let port = await ports.first(where: { _ in true }) else { throw CancellationError() }
        return UnavailableStub(url: URL(string: "http://127.0.0.1:\(port)")!, shared: state, task: task)
    }

    func stop() async {
        self.task.cancel()
        _ = await self.task.result
    }
}
