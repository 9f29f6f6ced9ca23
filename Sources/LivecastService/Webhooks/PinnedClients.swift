import AsyncHTTPClient
import NIOPosix
import Synchronization

/// HTTP clients that each connect to one checked address of a host (AsyncHTTPClient's `dnsOverride`; TLS still
/// names and verifies the host), so a delivery goes to the address its check saw: a name whose answer changes between
/// the check and the connection (DNS rebinding) cannot lead it elsewhere. One client per host and address keeps its
/// connections alive between deliveries. Beyond ``capacity`` the least recently used is let go: shut down at once
/// when no delivery uses it, else when the last delivery using it ends, so none is cut off under a delivery.
final class PinnedClients: Sendable {
    /// How many clients are kept.
    let capacity: Int
    private let configuration: HTTPClient.Configuration
    private let state = Mutex(State())

    /// A host and the address it is reached at.
    private struct Pin: Hashable {
        let host: String
        let address: String
    }

    private struct Entry {
        let client: HTTPClient
        var lastUse: UInt64
        /// Deliveries using it now.
        var inUse: Int
    }

    private struct State {
        var entries: [Pin: Entry] = [:]
        /// Clients let go while deliveries used them, with how many still do.
        var retiring: [ObjectIdentifier: Entry] = [:]
        var uses: UInt64 = 0
    }

    /// - Parameters:
    ///   - configuration: Every client's settings but the address.
    ///   - capacity: How many clients are kept. Defaults to 64.
    init(configuration: HTTPClient.Configuration, capacity: Int = 64) {
        self.configuration = configuration
        self.capacity = max(capacity, 1)
    }

    /// Runs `delivery` with the client that reaches `host` at `address`; the client is not shut down before
    /// `delivery` returns.
    func withClient<Result: Sendable>(host: String, address: String, _ delivery: (HTTPClient) async -> Result) async -> Result {
        let pin = Pin(host: host, address: address)
        let (client, evicted) = self.take(pin)
        if let evicted { try? await evicted.shutdown() }
        let result = await delivery(client)
        if let idle = self.give(client, of: pin) { try? await idle.shutdown() }
        return result
    }

    /// Shuts every client down; call once, after the last delivery.
    func shutdown() async throws {
        let clients = self.state.withLock { state in
            defer { state = State() }
            return state.entries.values.map(\.client) + state.retiring.values.map(\.client)
        }
        for client in clients { try await client.shutdown() }
    }

    /// The pin's client, marked in use; and a client let go to make room that no delivery uses, to shut down.
    private func take(_ pin: Pin) -> (client: HTTPClient, evicted: HTTPClient?) {
        self.state.withLock { state in
            state.uses += 1
            if var entry = state.entries[pin] {
                entry.lastUse = state.uses
                entry.inUse += 1
                state.entries[pin] = entry
                return (entry.client, nil)
            }
            var evicted: HTTPClient?
            if state.entries.count >= self.capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                if oldest.value.inUse > 0 {
                    state.retiring[ObjectIdentifier(oldest.value.client)] = oldest.value
                } else {
                    evicted = oldest.value.client
                }
            }
            var configuration = self.configuration
            configuration.dnsOverride = [pin.host: pin.address]
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            state.entries[pin] = Entry(client: client, lastUse: state.uses, inUse: 1)
            return (client, evicted)
        }
    }

    /// Ends a delivery's use of `client`. - Returns: The client when it was let go meanwhile and this was its last
    /// delivery: to shut down.
    private func give(_ client: HTTPClient, of pin: Pin) -> HTTPClient? {
        self.state.withLock { state in
            if let entry = state.entries[pin], entry.client === client {
                state.entries[pin]?.inUse -= 1
                return nil
            }
            let id = ObjectIdentifier(client)
            guard var retiring = state.retiring[id] else { return nil }
            retiring.inUse -= 1
            state.retiring[id] = retiring.inUse > 0 ? retiring : nil
            return retiring.inUse > 0 ? nil : client
        }
    }
}
