import AsyncHTTPClient
import NIOPosix
import Synchronization

/// HTTP clients that each connect to one checked address of a host (AsyncHTTPClient's `dnsOverride`; TLS still
/// names and verifies the host), so a delivery goes to the address its check saw: a name whose answer changes between
/// the check and the connection (DNS rebinding) cannot lead it elsewhere. One client per host and address keeps its
/// connections alive between deliveries; the least recently used beyond ``capacity`` is shut down (a delivery it was
/// making fails and is retried like any other).
final class PinnedClients: Sendable {
    /// How many clients are kept.
    let capacity: Int
    private let configuration: HTTPClient.Configuration
    private let clients = Mutex<(entries: [Pin: Entry], uses: UInt64)>(([:], 0))

    /// A host and the address it is reached at.
    private struct Pin: Hashable {
        let host: String
        let address: String
    }

    private struct Entry {
        let client: HTTPClient
        var lastUse: UInt64
    }

    /// - Parameters:
    ///   - configuration: Every client's settings but the address.
    ///   - capacity: How many clients are kept. Defaults to 64.
    init(configuration: HTTPClient.Configuration, capacity: Int = 64) {
        self.configuration = configuration
        self.capacity = max(capacity, 1)
    }

    /// The client that reaches `host` at `address`.
    func client(host: String, address: String) async -> HTTPClient {
        let pin = Pin(host: host, address: address)
        let (client, evicted) = self.clients.withLock { state -> (HTTPClient, HTTPClient?) in
            state.uses += 1
            if var entry = state.entries[pin] {
                entry.lastUse = state.uses
                state.entries[pin] = entry
                return (entry.client, nil)
            }
            var evicted: HTTPClient?
            if state.entries.count >= self.capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                evicted = state.entries.removeValue(forKey: oldest.key)?.client
            }
            var configuration = self.configuration
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            state.entries[pin] = Entry(client: client, lastUse: state.uses)
            return (client, evicted)
        }
        if let evicted { try? await evicted.shutdown() }
        return client
    }

    /// Shuts every client down; call once, after the last delivery.
    func shutdown() async throws {
        let clients = self.clients.withLock { state in
            defer { state.entries = [:] }
            return state.entries.values.map(\.client)
        }
        for client in clients { try await client.shutdown() }
    }
}
