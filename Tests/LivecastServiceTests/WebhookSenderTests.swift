import AsyncHTTPClient
import LivecastTesting
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@testable import LivecastService

/// A delivery connects to the address its check saw (DNS rebinding cannot lead it elsewhere): the sender resolves a
/// host name once, and a pinned client connects to that address whatever the name resolves to later.
@Suite struct WebhookSenderTests {
    /// A resolver that answers from a table and counts its questions.
    private final class Resolver: Sendable {
        private let answers: [String: [String]]
        private let questions = Mutex(0)
        var asked: Int { self.questions.withLock { $0 } }

        init(_ answers: [String: [String]]) { self.answers = answers }

        @Sendable func resolve(_ host: String) async throws -> [String] {
            self.questions.withLock { $0 += 1 }
            return self.answers[host] ?? []
        }
    }

    @Test func aNameIsRoutedToTheAddressItsCheckResolvedOnce() async throws {
        let resolver = Resolver([
            "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
            "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
        ])
        let sender = WebhookSender(resolve: resolver.resolve)
        #expect(await sender.route("https://hooks.example.com/events") == .pinned(host: "hooks.example.com", address: "93.184.216.34"))
        #expect(resolver.asked == 1, "the check and the connection share one resolution")
        #expect(await sender.route("https://mixed.example.com/events") == .refused("address_not_allowed"))
        #expect(await sender.route("https://unknown.example.com/events") == .refused("dns_failure"))
        #expect(await sender.route("https://93.184.216.34/events") == .direct)
        #expect(await sender.route("https://10.0.0.7/events") == .refused("address_not_allowed"))
        try await sender.shutdown()

        let permissive = WebhookSender(allowPrivate: true, resolve: resolver.resolve)
        #expect(await permissive.route("https://mixed.example.com/events") == .direct)
        try await permissive.shutdown()
    }

    @Test func aPinnedClientConnectsToItsAddressWhateverTheNameResolvesTo() async throws {
        try await WebhookReceiver.with { receiver in
            let clients = PinnedClients(configuration: .init())
            // `.invalid` never resolves (RFC 6761): only the pin can reach the receiver.
            let (client, status) = await clients.withClient(host: "rebinding.invalid", address: "127.0.0.1") { client in
                (client, await Self.post(on: client, to: "http://rebinding.invalid:\(receiver.port)/hook"))
            }
            #expect(status == 200)
            #expect(receiver.requests.count == 1)
            #expect(await Self.use(clients, "rebinding.invalid") === client, "kept for the next delivery")
            try await clients.shutdown()
        }
    }

    @Test func theLeastRecentlyUsedClientBeyondTheCapacityIsShutDown() async throws {
        let clients = PinnedClients(configuration: .init(), capacity: 2)
        let first = await Self.use(clients, "a.invalid")
        let second = await Self.use(clients, "b.invalid")
        #expect(await Self.use(clients, "a.invalid") === first)
        _ = await Self.use(clients, "c.invalid")
        // `b` was used least recently: it is gone, and shut down.
        #expect(await Self.use(clients, "b.invalid") !== second)
        await #expect(throws: HTTPClientError.alreadyShutdown) { try await second.shutdown() }
        try await clients.shutdown()
    }

    @Test func aClientLetGoUnderADeliveryIsShutDownOnlyOnceTheDeliveryEnds() async throws {
        try await WebhookReceiver.with(answer: { _ in .init(delay: .seconds(1)) }) { receiver in
            let clients = PinnedClients(configuration: .init(), capacity: 1)
            let delivery = Task {
                await clients.withClient(host: "first.invalid", address: "127.0.0.1") { client in
                    (client, await Self.post(on: client, to: "http://first.invalid:\(receiver.port)/hook"))
                }
            }
            try await eventually("the first delivery under way") { receiver.requests.count == 1 }
            // A second host takes the only place: the first client is let go while its delivery waits for its answer.
            let other = await Self.use(clients, "second.invalid")
            let (first, status) = await delivery.value
            #expect(status == 200, "the delivery in flight was not cut off")
            #expect(first !== other)
            await #expect(throws: HTTPClientError.alreadyShutdown, "shut down once its delivery ended") { try await first.shutdown() }
            try await clients.shutdown()
        }
    }

    @Test func aDeliveryEndsAtItsLimitThoughItsAnswersBodyTrickles() async throws {
        // A byte every half second: each resets AsyncHTTPClient's read timeout, so only the delivery's own limit ends it.
        try await WebhookReceiver.with(answer: { number in .init(status: number == 0 ? 200 : 503, trickle: .milliseconds(500)) }) { receiver in
            try await withSender(timeout: .seconds(2), allowPrivate: true) { sender in
                for expected in [WebhookSender.Outcome.delivered(status: 200), .failed(reason: "http_503", retryAfter: nil)] {
                    let started = ContinuousClock.now
                    let outcome = await sender.post("{}", to: receiver.url(), headers: [])
                    let took = ContinuousClock.now - started
                    #expect(outcome == expected, "the head's status decides")
                    #expect(took >= .seconds(1) && took < .seconds(6), "took \(took)")
                    try await eventually("the trickling answer's connection closed") { receiver.tricklingNow == 0 }
                }
            }
        }
    }

    /// The client `host` at 127.0.0.1, used for no delivery.
    private static func use(_ clients: PinnedClients, _ host: String) async -> HTTPClient {
        await clients.withClient(host: host, address: "127.0.0.1") { $0 }
    }

    /// A POST of `{}` through `client`: its status, or `nil` (recorded) when it failed.
    private static func post(on client: HTTPClient, to url: String) async -> UInt? {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: "{}"))
        do {
            return try await client.execute(request, timeout: .seconds(10)).status.code
        } catch {
            Issue.record("the pinned client did not reach the receiver: \(error)")
            return nil
        }
    }
}
