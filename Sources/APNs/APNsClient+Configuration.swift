public import LivecastCore

extension APNsClient {
    /// A host and port.
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `https://HOST:PORT` (the port defaults to 443). - Returns: `nil` for anything else.
        public init?(url: String) {
            guard url.hasPrefix("https://") else { return nil }
            var rest = url.dropFirst("https://".count)
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            guard !rest.isEmpty, !rest.contains("/") else { return nil }
            if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                let host = String(rest[rest.index(after: rest.startIndex)..<close])
                let tail = rest[rest.index(after: close)...]
                guard tail.isEmpty || tail.hasPrefix(":"), let port = tail.isEmpty ? 443 : Int(tail.dropFirst()) else { return nil }
                self.init(host: host, port: port)
            } else if let colon = rest.lastIndex(of: ":") {
                guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else { return nil }
                self.init(host: String(rest[..<colon]), port: port)
            } else {
                self.init(host: String(rest), port: 443)
            }
            guard !self.host.isEmpty else { return nil }
        }

        public var description: String { "https://\(self.host):\(self.port)" }
    }

    /// Where the client connects and how it behaves.
    public struct Configuration: Sendable {
        /// Sandbox or production. Defaults to `sandbox`.
        public var environment: APNsEnvironment
        /// Device pushes. Defaults to Apple's host for the environment, port 443.
        public var pushEndpoint: Endpoint
        /// Broadcasts. Defaults to the push endpoint (Apple's prose names the same host; APNS-REFERENCE §2.1).
        public var broadcastEndpoint: Endpoint
        /// Channel management. Defaults to Apple's management host: port 2195 (sandbox) or 2196 (production).
        public var managementEndpoint: Endpoint
        /// PEM files of extra certificates to trust (for an emulator or a proxy). Defaults to none.
        public var additionalTrustRootFiles: [String]
        /// The most connections per endpoint: one opens at first use, all of them at the first batch of a hundred
        /// pushes or more, and another while every stream of those open is busy. Defaults to
        /// ``defaultConnectionsPerEndpoint``.
        public var connectionsPerEndpoint: Int
        /// The connections per endpoint a configuration starts with: `2`.
        public static let defaultConnectionsPerEndpoint = 2
        /// How long a request may take, waiting for a connection included. Defaults to 15 seconds.
        public var requestTimeout: Duration
        /// How often a request may go unanswered because its connection dropped before it fails. Requests the
        /// server refused or never saw (GOAWAY) are sent again until the deadline. Defaults to `3`.
        public var maximumAttempts: Int
        /// A PING goes out after this long without traffic (Apple suggests an hour). Defaults to 1 hour.
        public var idlePingInterval: Duration

        /// Apple's hosts for an environment, and the defaults above.
        public init(environment: APNsEnvironment = .sandbox) {
            self.environment = environment
            let pushHost = environment == .sandbox ? "api.sandbox.push.apple.com" : "api.push.apple.com"
            self.pushEndpoint = Endpoint(host: pushHost, port: 443)
            self.broadcastEndpoint = self.pushEndpoint
            self.managementEndpoint =
                environment == .sandbox
                ? Endpoint(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)
                : Endpoint(host: "api-manage-broadcast.push.apple.com", port: 2196)
            self.additionalTrustRootFiles = []
            self.connectionsPerEndpoint = Self.defaultConnectionsPerEndpoint
            self.requestTimeout = .seconds(15)
            self.maximumAttempts = 3
            self.idlePingInterval = .seconds(3600)
        }
    }
}
