/// Why a request got no HTTP answer.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; new kinds may be added.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { self.rawValue }

        /// The request's deadline passed first.
        public static let deadlineExceeded = Code(rawValue: "deadline_exceeded")
        /// No connection could be made (DNS, TCP, TLS, ALPN).
        public static let connectionFailed = Code(rawValue: "connection_failed")
        /// The connection closed with the request unanswered, and retries were spent.
        public static let connectionLost = Code(rawValue: "connection_lost")
        /// The server reset the stream.
        public static let streamReset = Code(rawValue: "stream_reset")
        /// The client was shut down.
        public static let shutdown = Code(rawValue: "shutdown")
    }

    /// What went wrong.
    public let code: Code
    /// Details for people.
    public let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }
}
