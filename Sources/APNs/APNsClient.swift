import Foundation
import LivecastCore
public import Logging
import NIOConcurrencyHelpers
public import NIOCore
public import NIOPosix
import NIOSSL
public import ServiceLifecycle
import Synchronization

/// An APNs client for one team and environment: device pushes, broadcasts and channel management over pooled
/// HTTP/2 connections, signed with one provider token.
///
/// APNs' answers are never thrown: every call returns an ``APNsOutcome`` with the status, reason, ids and a
/// ``APNsOutcome/Classification`` saying what to do next. Batches (``send(_:)-([DevicePush])``) cost one hop per
/// connection, not a task per push.
///
/// The client is a `Service`: run it in a `ServiceGroup` before the services that use it, and graceful shutdown
/// closes its connections after theirs. Owners that manage it themselves call ``shutdown()`` instead.
///
/// ```swift
/// let client = try APNsClient(configuration: .init(environment: .sandbox), credentials: credentials)
/// let outcome = await client.send(DevicePush(deviceToken: token, bundleID: "com.example.game", payload: bytes))
/// await client.shutdown()
/// ```
public final class APNsClient: Sendable {
    /// How the client was configured.
    public let configuration: Configuration
    private let authorization: ProviderTokenAuthorization
    private let pushPool: HTTP2ConnectionPool
    private let broadcastPool: HTTP2ConnectionPool
    private let managementPool: HTTP2ConnectionPool
    /// Where each batch's watchdog runs.
    private let eventLoopGroup: any EventLoopGroup
    private let templates = NIOLockedValueBox<[String: HeaderTemplate]>([:])

    /// Creates a client; connections are made on first use.
    /// - Parameters:
    ///   - configuration: Endpoints, trust and limits.
    ///   - credentials: The team, key id and signing key.
    ///   - clock: The clock provider tokens are dated with. Defaults to the system clock.
    ///   - eventLoopGroup: Where connections run. Defaults to NIO's shared multi-threaded group.
    ///   - logger: For connection events; never sees keys or tokens. Defaults to no logging.
    /// - Throws: ``APNsClient/ConfigurationError`` when a trust file cannot be read.
    public init(
        configuration: Configuration,
        credentials: APNsCredentials,
        clock: any WallClock = SystemWallClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "livecast.apns", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        let authorization = ProviderTokenAuthorization(tokens: ProviderTokens(credentials: credentials, clock: clock))
        self.authorization = authorization
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        tlsConfiguration.applicationProtocols = ["h2"]
        tlsConfiguration.minimumTLSVersion = .tlsv12
        for file in configuration.additionalTrustRootFiles {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw ConfigurationError(message: "cannot read CA file \(file)")
            }
            tlsConfiguration.additionalTrustRoots.append(.file(file))
        }
        let tls: NIOSSLContext
        do {
            tls = try NIOSSLContext(configuration: tlsConfiguration)
        } catch {
            throw ConfigurationError(message: "TLS setup failed: \(error)")
        }
        let settings = TransportSettings(
            maximumAttempts: max(configuration.maximumAttempts, 1),
            idlePingInterval: .nanoseconds(Int64(configuration.idlePingInterval.components.seconds) * 1_000_000_000),
            pingTimeout: .seconds(10)
        )
        let pool = { (endpoint: Endpoint, connections: Int) -> HTTP2ConnectionPool in
            HTTP2ConnectionPool(
                endpoint: endpoint,
                connections: connections,
                tls: tls,
                authorization: authorization,
                settings: settings,
                group: eventLoopGroup,
                logger: logger
            )
        }
        let pushPool = pool(configuration.pushEndpoint, configuration.connectionsPerEndpoint)
        self.pushPool = pushPool
        self.broadcastPool =
            configuration.broadcastEndpoint == configuration.pushEndpoint
            ? pushPool : pool(configuration.broadcastEndpoint, configuration.connectionsPerEndpoint)
        self.managementPool = pool(configuration.managementEndpoint, 1)
    }

    /// Closes every connection. Requests still waiting fail with ``TransportError/Code/shutdown``.
    public func shutdown() async {
        await self.pushPool.shutdown()
        if self.broadcastPool !== self.pushPool { await self.broadcastPool.shutdown() }
        await self.managementPool.shutdown()
    }

    // MARK: - Device pushes

    /// Sends one device push.
    public func send(_ push: DevicePush) async -> APNsOutcome {
        await self.send([push])[0]
    }

    /// Sends many device pushes at once over the pool and reports each outcome, in the order given.
    ///
    /// At most 500 requests per connection (``Configuration/connectionsPerEndpoint``) of a batch are made and handed to
    /// the connections at once; the rest are made as answers come in, so a batch of thousands keeps every stream busy
    /// without holding every request in memory.
    public func send(_ pushes: [DevicePush]) async -> [APNsOutcome] {
        // Pushes of a batch usually share topic, type and priority: look their template up once per run of equal ones.
        var templates: [HeaderTemplate] = []
        templates.reserveCapacity(pushes.count)
        var last: (key: DeviceTemplateKey, template: HeaderTemplate)?
        for push in pushes {
            let key = DeviceTemplateKey(pushType: push.pushType, bundleID: push.bundleID, priority: push.priority)
            if let last, last.key == key {
                templates.append(last.template)
                continue
            }
            let template = self.template(
                "POST",
                self.pushPool.endpoint,
                [("apns-push-type", push.pushType.headerValue), ("apns-topic", push.topic), ("apns-priority", push.priority.description)]
            )
            last = (key, template)
            templates.append(template)
        }
        return await self.exchange(pushes.count, on: self.pushPool) { [templates] index, deadline, completion in
            let push = pushes[index]
            var extra: [(String, String)] = []
            if let expiration = push.expiration.secondsSince1970 { extra.append(("apns-expiration", String(expiration))) }
            if let apnsID = push.apnsID { extra.append(("apns-id", apnsID.headerValue)) }
            if let collapseID = push.collapseID { extra.append(("apns-collapse-id", collapseID)) }
            return HTTP2Exchange(
                template: templates[index],
                path: "/3/device/\(push.deviceToken)",
                extraHeaders: extra,
                body: push.payload,
                deadline: deadline,
                completion: completion
            )
        }
    }

    /// The most requests of one batch made and handed to the connections at once: 500 for each connection, the most
    /// streams APNs has been seen to allow on one.
    private var batchWindow: Int { max(self.configuration.connectionsPerEndpoint, 1) * 500 }

    /// What makes device pushes share constant headers.
    private struct DeviceTemplateKey: Equatable {
        var pushType: APNsPushType
        var bundleID: String
        var priority: APNsPriority
    }

    // MARK: - Broadcasts

    /// Sends one broadcast to a channel.
    public func broadcast(_ push: BroadcastPush) async -> APNsOutcome {
        await self.exchange(1, on: self.broadcastPool) { _, deadline, completion in
            var extra = [("apns-channel-id", push.channelID)]
            if let expiration = push.expiration.secondsSince1970 { extra.append(("apns-expiration", String(expiration))) }
            if let requestID = push.requestID { extra.append(("apns-request-id", requestID.headerValue)) }
            return HTTP2Exchange(
                template: self.template(
                    "POST",
                    self.broadcastPool.endpoint,
                    [("apns-push-type", APNsPushType.liveactivity.headerValue), ("apns-priority", push.priority.description)]
                ),
                path: "/4/broadcasts/apps/\(push.bundleID)",
                extraHeaders: extra,
                body: push.payload,
                deadline: deadline,
                completion: completion
            )
        }[0]
    }

    // MARK: - Channel management

    /// Creates a channel: `POST /1/apps/{bundleId}/channels`. The new id is ``APNsOutcome/channelID``.
    /// - Parameters:
    ///   - bundleID: The app's bundle id.
    ///   - storagePolicy: Whether APNs keeps the channel's latest message.
    public func createChannel(bundleID: String, storagePolicy: APNsChannelStoragePolicy) async -> APNsOutcome {
        let body = #"{"message-storage-policy":\#(storagePolicy.rawValue),"push-type":"LiveActivity"}"#
        return await self.management("POST", "/1/apps/\(bundleID)/channels", channelID: nil, body: Array(body.utf8))
    }

    /// Reads a channel's configuration; ``APNsOutcome/body`` holds
    /// `{"message-storage-policy": …, "push-type": "LiveActivity"}`.
    public func readChannel(bundleID: String, channelID: String) async -> APNsOutcome {
        await self.management("GET", "/1/apps/\(bundleID)/channels", channelID: channelID, body: [])
    }

    /// Deletes a channel.
    public func deleteChannel(bundleID: String, channelID: String) async -> APNsOutcome {
        await self.management("DELETE", "/1/apps/\(bundleID)/channels", channelID: channelID, body: [])
    }

    /// Lists an app's channels at APNs. - Returns: the ids (empty on failure) and the outcome.
    public func listChannels(bundleID: String) async -> (channels: [String], outcome: APNsOutcome) {
        let outcome = await self.management("GET", "/1/apps/\(bundleID)/all-channels", channelID: nil, body: [])
        guard outcome.isSuccess, let json = try? JSONDecoder().decode(JSONValue.self, from: Data(outcome.body)),
            case .array(let ids) = json["channels"]
        else { return ([], outcome) }
        return (ids.compactMap(\.stringValue), outcome)
    }

    private func management(_ method: String, _ path: String, channelID: String?, body: [UInt8]) async -> APNsOutcome {
        await self.exchange(1, on: self.managementPool) { _, deadline, completion in
            HTTP2Exchange(
                template: self.template(method, self.managementPool.endpoint, []),
                path: path,
                extraHeaders: channelID.map { [("apns-channel-id", $0)] } ?? [],
                body: body,
                deadline: deadline,
                completion: completion
            )
        }[0]
    }

    // MARK: - Plumbing

    /// Builds `count` exchanges, submits them (at most ``batchWindow`` at once) and waits for every outcome. An answer of
    /// `ExpiredProviderToken` may send a request once more (``ProviderTokenAuthorization``).
    private func exchange(
        _ count: Int,
        on pool: HTTP2ConnectionPool,
        make: (Int, NIODeadline, @escaping @Sendable (HTTP2Exchange, HTTP2Result) -> Void) -> HTTP2Exchange
    ) async -> [APNsOutcome] {
        guard count > 0 else { return [] }
        let deadline =
            NIODeadline.now()
            + .nanoseconds(
                Int64(self.configuration.requestTimeout.components.seconds) * 1_000_000_000
                    + self.configuration.requestTimeout.components.attoseconds / 1_000_000_000
            )
        let collector = OutcomeCollector(count: count)
        let window = RequestWindow(size: min(count, self.batchWindow))
        // The transport ends every exchange by its deadline; should one ever be dropped on the way, the caller
        // still gets an answer for it shortly after, and no more requests are made.
        collector.watch(
            self.eventLoopGroup.any().scheduleTask(deadline: deadline + .seconds(5)) {
                collector.expire()
                window.close()
            }
        )
        // The requests are made here, off the connections' event loops, a window's worth at first and then as
        // answers free room, several at a time.
        let refill = max(1, min(64, self.batchWindow / 8))
        var next = 0
        while next < count {
            let made = await window.take(atLeast: min(refill, count - next), atMost: count - next)
            guard made > 0 else { break }
            pool.submit(
                (next..<next + made).map { index in
                    make(index, deadline) { exchange, result in
                        let outcome = APNsOutcome.from(result)
                        if self.authorization.mayResend(exchange, answered: outcome) {
                            pool.submit([exchange.resend()])
                        } else {
                            collector.record(outcome, at: index)
                            window.give()
                        }
                    }
                }
            )
            next += made
        }
        return await collector.outcomes()
    }

    /// The constant headers for a method, endpoint and header set, laid out once and reused.
    private func template(_ method: String, _ endpoint: Endpoint, _ headers: [(String, String)]) -> HeaderTemplate {
        let key = ([method, endpoint.host] + headers.map { "\($0.0)=\($0.1)" }).joined(separator: "\n")
        return self.templates.withLockedValue { templates in
            if let template = templates[key] { return template }
            let authority = endpoint.port == 443 ? endpoint.host : "\(endpoint.host):\(endpoint.port)"
            let template = HeaderTemplate(method: method, authority: authority, headers: headers)
            templates[key] = template
            return template
        }
    }

    /// A configuration the client cannot use.
    public struct ConfigurationError: Error, CustomStringConvertible {
        /// What is wrong.
        public let message: String
        public var description: String { self.message }
    }
}

extension APNsClient: Service {
    /// Waits for graceful shutdown (or cancellation), then closes every connection as ``shutdown()`` does.
    /// Requests still waiting then fail with ``TransportError/Code/shutdown``.
    public func run() async {
        try? await gracefulShutdown()
        await self.shutdown()
    }
}
