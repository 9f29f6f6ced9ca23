import AsyncHTTPClient
import Foundation
import LivecastStore
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// POSTs batches to webhook endpoints over AsyncHTTPClient: redirects not followed, one deadline for the whole
/// exchange, at most ``maximumResponseBytes`` of a response read (and ignored), and, unless private addresses are
/// allowed, no request to an address that is not public (``WebhookAddress``).
///
/// A host named by name is resolved once: the check sees its addresses, and the request connects to the first of them
/// (``PinnedClients``), so a name whose answer changes in between (DNS rebinding) cannot lead a delivery elsewhere.
package final class WebhookSender: Sendable {
    /// How a request ended.
    package enum Outcome: Sendable, Hashable {
        /// A 2xx answer.
        case delivered(status: Int)
        /// Anything else: `reason` is short and free of secrets (`http_503`, `timeout`, `connection_error`,
        /// `address_not_allowed`); `retryAfter` is the receiver's `Retry-After`, if it gave one.
        case failed(reason: String, retryAfter: Duration?)
    }

    /// How much of a response is read before it is dropped.
    package static let maximumResponseBytes = 64 * 1024

    /// Where a delivery connects, once its URL is checked.
    enum Route: Sendable, Hashable {
        /// Not at all, for this reason: `invalid_url`, `dns_failure` or `address_not_allowed`.
        case refused(String)
        /// To the address the URL names.
        case direct
        /// To `address`, the checked address of the host the URL names by name.
        case pinned(host: String, address: String)
    }

    /// The client of URLs that name an address.
    private let client: HTTPClient
    /// The clients of hosts named by name, each pinned to a checked address.
    private let pinned: PinnedClients
    private let timeout: Duration
    private let allowPrivate: Bool
    private let resolve: @Sendable (String) async throws -> [String]

    /// - Parameters:
    ///   - timeout: The whole delivery's limit: the name's lookup, the connection, the request, and the answer's head
    ///     and body. Defaults to 10 s; the connection alone has at most 5 s of it.
    ///   - allowPrivate: Deliver to any address, not only public ones (a private network's receivers, tests).
    ///   - resolve: A host name's IPv4 and IPv6 addresses. Defaults to the system's resolver (``resolve(_:)``).
    package init(
        timeout: Duration = .seconds(10),
        allowPrivate: Bool = false,
        resolve: @escaping @Sendable (String) async throws -> [String] = WebhookSender.resolve
    ) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .init(min(timeout, .seconds(5))), read: .init(timeout))
        )
        configuration.decompression = .disabled
        self.client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        self.pinned = PinnedClients(configuration: configuration)
        self.timeout = timeout
        self.allowPrivate = allowPrivate
        self.resolve = resolve
    }

    /// Stops the clients; call once, after the last ``post(_:to:headers:)``.
    package func shutdown() async throws {
        try await self.client.shutdown()
        try await self.pinned.shutdown()
    }

    /// POSTs `body` to `url` with `headers`, unless the URL's address is not allowed, all within the timeout: the
    /// name's lookup, the connection, the request and the answer's head and body. The outcome is the head's status;
    /// a body still arriving at the deadline is cut off with its connection.
    package func post(_ body: String, to url: String, headers: [(String, String)]) async -> Outcome {
        let deadline = ContinuousClock.now + self.timeout
        guard let route = await withDeadline(deadline, { await self.route(url) }) else { return Self.timedOut }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        switch route {
        case .refused(let reason):
            return .failed(reason: reason, retryAfter: nil)
        case .direct:
            return await Self.exchange(request, on: self.client, deadline: deadline)
        case .pinned(let host, let address):
            return await self.pinned.withClient(host: host, address: address) { client in
                await Self.exchange(request, on: client, deadline: deadline)
            }
        }
    }

    private static let timedOut = Outcome.failed(reason: "timeout", retryAfter: nil)

    /// Sends `request` and reads up to ``maximumResponseBytes`` of its answer, both before `deadline`.
    ///
    /// AsyncHTTPClient's deadline ends with the answer's head, and its read timeout only bounds the wait for each
    /// next part: a receiver that answers at once and then sends its body a byte at a time would hold the delivery
    /// for as long as it likes. So the body is read under the same deadline, and cancelled (its connection closed)
    /// when that comes first.
    private static func exchange(_ request: HTTPClientRequest, on client: HTTPClient, deadline: ContinuousClock.Instant) async -> Outcome {
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: .now() + TimeAmount(ContinuousClock.now.duration(to: deadline)))
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) {
            return Self.timedOut
        } catch {
            return .failed(reason: "connection_error", retryAfter: nil)
        }
        _ = await withDeadline(deadline) {
            var read = 0
            do {
                for try await chunk in response.body {
                    read += chunk.readableBytes
                    if read >= Self.maximumResponseBytes { break }
                }
            } catch {
                // A body cut short changes nothing: the outcome is the head's.
            }
        }
        let status = Int(response.status.code)
        if (200..<300).contains(status) {
            return .delivered(status: status)
        }
        let retryAfter = response.headers.first(name: "Retry-After").flatMap { WebhookBackoff.retryAfter($0) }
        return .failed(reason: "http_\(status)", retryAfter: retryAfter)
    }

    /// Where a delivery to `url` connects. Allowed: any address with `allowPrivate`; plain HTTP to this host by name or
    /// address (the registration takes `http` only for loopback); otherwise a host whose every address is public,
    /// reached at the first of them (in the resolver's order of preference), the one its check saw.
    func route(_ url: String) async -> Route {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = components.host, !host.isEmpty
        else {
            return .refused("invalid_url")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if self.allowPrivate || (scheme == "http" && WebhookAddress.isLoopback(host)) {
            return .direct
        }
        if let isPublic = WebhookAddress.isPublic(host) {
            return isPublic ? .direct : .refused("address_not_allowed")
        }
        guard let addresses = try? await self.resolve(host), let first = addresses.first else {
            return .refused("dns_failure")
        }
        guard addresses.allSatisfy({ WebhookAddress.isPublic($0) == true }) else {
            return .refused("address_not_allowed")
        }
        return .pinned(host: host, address: first)
    }

    /// The IPv4 and IPv6 addresses `host` resolves to, by `getaddrinfo` on NIO's thread pool. `getaddrinfo` cannot be
    /// interrupted: a cancelled caller stops waiting at once, and the lookup ends in the background by the resolver's
    /// own timeouts.
    @Sendable package static func resolve(_ host: String) async throws -> [String] {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let answer = eventLoop.makePromise(of: [String].self)
        NIOThreadPool.singleton.runIfActive(eventLoop: eventLoop) { Self.lookUp(host) }.cascade(to: answer)
        return try await withTaskCancellationHandler {
            try await answer.futureResult.get()
        } onCancel: {
            answer.fail(CancellationError())
        }
    }

    /// `getaddrinfo`'s IPv4 and IPv6 addresses for `host`, blocking.
    private static func lookUp(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = Self.text(current.pointee.ai_addr, family: current.pointee.ai_family) {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    private static func text(_ address: UnsafeMutablePointer<sockaddr>?, family: Int32) -> String? {
        guard let address else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: UnsafePointer<CChar>?
        switch family {
        case AF_INET:
            written = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &buffer, socklen_t(buffer.count)) }
            }
        case AF_INET6:
            written = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafePointer(to: v6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &buffer, socklen_t(buffer.count)) }
            }
        default:
            return nil
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
