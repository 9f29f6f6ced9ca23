public import Foundation
import LivecastCore

/// What became of one request to APNs: its answer, or why there was none, and what to do about it.
public struct APNsOutcome: Sendable, CustomStringConvertible {
    /// What the caller should do next.
    ///
    /// An open set of values, not an enum: a kind of answer Apple adds later can become a new static member without
    /// breaking code that switches over the ones it knows (such a switch has a `default`).
    public struct Classification: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable, Hashable {
            case delivered, tokenInvalid, retryLater, requestMustBeFixed, credentialsProblem
        }

        private let value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// APNs accepted the request.
        public static let delivered = Self(.delivered)
        /// The device token is dead (`410 Unregistered`/`ExpiredToken`, `400 BadDeviceToken`,
        /// `DeviceTokenNotForTopic`): stop sending to it.
        public static let tokenInvalid = Self(.tokenInvalid)
        /// Try again later with backoff: throttling, a server error, or no answer at all.
        public static let retryLater = Self(.retryLater)
        /// The request itself is wrong (a header, the payload, the channel): retrying it as it is will fail again.
        public static let requestMustBeFixed = Self(.requestMustBeFixed)
        /// The provider token or key is refused: fix the credentials.
        public static let credentialsProblem = Self(.credentialsProblem)

        /// Its name, such as `retryLater`.
        public var description: String { self.value.rawValue }
    }

    /// The HTTP status, or `nil` when no answer came.
    public var status: Int?
    /// APNs' `reason`, on errors.
    public var reason: APNsReason?
    /// `apns-id` (device pushes).
    public var apnsID: UUID? { self.headers.apnsID.flatMap(UUID.init(uuidString:)) }
    /// `apns-unique-id` (device pushes, in the development environment).
    public var apnsUniqueID: UUID? { self.headers.apnsUniqueID.flatMap(UUID.init(uuidString:)) }
    /// `apns-request-id` (broadcasts and channel management).
    public var requestID: UUID? { self.headers.requestID.flatMap(UUID.init(uuidString:)) }
    /// `apns-channel-id` (channel creation).
    public var channelID: String?
    /// For 410: when APNs learnt the token is invalid, in milliseconds since 1970.
    public var invalidSince: Int?
    /// `Retry-After`, when the server sent one (in whole seconds).
    public var retryAfter: Duration?
    /// Why there was no answer.
    public var transportError: TransportError?
    /// The response body (channel reads and lists carry JSON).
    public var body: [UInt8]
    /// What to do next.
    public var classification: Classification
    /// How often the transport sent the request before this answer (more than 1 after refused streams, GOAWAY
    /// or a dropped connection); 0 when it never got an answer.
    public var attempts: Int
    /// How long APNs took to answer the last attempt; `nil` when it never answered.
    public var latency: Duration?
    /// The ids' headers as APNs sent them, parsed only when asked for.
    private var headers: (apnsID: String?, apnsUniqueID: String?, requestID: String?) = (nil, nil, nil)

    /// Whether APNs accepted the request.
    public var isSuccess: Bool { self.classification == .delivered }

    /// Why the request failed, in one word: APNs' reason, `transport:CODE` when no answer came, or `status N` for
    /// an error answer without a reason; empty when APNs accepted it.
    public var failureReason: String {
        if let reason { return reason.rawValue }
        if let transportError { return "transport:\(transportError.code.rawValue)" }
        return self.isSuccess ? "" : "status \(self.status ?? 0)"
    }

    init(response: HTTP2Response) {
        self.status = response.status
        self.headers = (response.header("apns-id"), response.header("apns-unique-id"), response.header("apns-request-id"))
        self.channelID = response.header("apns-channel-id")
        self.retryAfter = response.header("retry-after").flatMap { Int($0) }.map { Duration.seconds($0) }
        self.body = response.body
        self.attempts = response.attempts
        self.latency = response.latency
        self.transportError = nil
        if !(200..<300).contains(response.status),
            let json = try? JSONDecoder().decode(JSONValue.self, from: Data(response.body))
        {
            self.reason = json["reason"]?.stringValue.map(APNsReason.init(rawValue:))
            self.invalidSince = json["timestamp"]?.intValue
        }
        self.classification = Self.classify(status: response.status, reason: self.reason)
    }

    init(error: TransportError) {
        self.body = []
        self.attempts = 0
        self.transportError = error
        self.classification = .retryLater
    }

    static func from(_ result: HTTP2Result) -> APNsOutcome {
        switch result {
        case .response(let response): APNsOutcome(response: response)
        case .failure(let error): APNsOutcome(error: error)
        }
    }

    /// Sorts an answer by what the caller should do (APNS-REFERENCE §4.1 retry guidance).
    static func classify(status: Int, reason: APNsReason?) -> Classification {
        switch (status, reason) {
        case (200..<300, _):
            return .delivered
        case (410, _), (400, .badDeviceToken?), (400, .deviceTokenNotForTopic?):
            return .tokenInvalid
        case (429, .tooManyProviderTokenUpdates?), (403, _):
            return .credentialsProblem
        case (429, _), (500..<600, _), (400, .idleTimeout?):
            return .retryLater
        default:
            return .requestMustBeFixed
        }
    }

    public var description: String {
        if let transportError { return "no answer (\(transportError))" }
        var text = "\(self.status ?? 0)"
        if let reason { text += " \(reason)" }
        return text + " [\(self.classification)]"
    }
}
