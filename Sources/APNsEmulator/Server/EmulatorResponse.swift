import Foundation
import NIOCore

/// What the emulator answers to one request, and what it then does to the connection.
struct EmulatorResponse {
    /// The `:status`.
    var status: Int
    /// Response headers, in order.
    var headers: [(String, String)]
    /// The body; empty for none.
    var body: ByteBuffer
    /// What happens to the connection after (or instead of) answering.
    var connectionAction: ConnectionAction?
    /// The APNs reason of an error answer made by ``apnsError(_:headers:)``, for the wire log.
    var apnsReason: String?
    /// Why the simulated devices silently dropped an accepted push (``IgnoredPush/Reason/silentDrops``), for the
    /// wire log.
    var deviceDropped: IgnoredPush.Reason?
    /// The request's entry in the wire log, when it was recorded: an answer that never leaves (its connection closed
    /// while it waited out the latency) is taken back from it (``EmulatorResponder/answerLost(_:)``).
    var wireSequence: Int?

    init(status: Int, headers: [(String, String)] = [], body: ByteBuffer = ByteBuffer(), connectionAction: ConnectionAction? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.connectionAction = connectionAction
    }

    /// An APNs error: `{"reason": …}` (and `timestamp` in milliseconds for 410) as `application/json`.
    static func apnsError(_ error: APNsFailure, headers: [(String, String)] = []) -> EmulatorResponse {
        var json = #"{"reason":"\#(error.reason)""#
        if let timestamp = error.timestamp {
            json += #","timestamp":\#(timestamp)"#
        }
        json += "}"
        var response = EmulatorResponse(
            status: error.status,
            headers: [("content-type", "application/json")] + headers,
            body: ByteBuffer(string: json)
        )
        response.apnsReason = error.reason
        return response
    }

    /// A JSON body made with `JSONEncoder`.
    static func json(_ value: some Encodable, status: Int = 200) -> EmulatorResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The emulator's snapshot types encode without failing; an empty object is the harmless fallback.
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return EmulatorResponse(status: status, headers: [("content-type", "application/json")], body: ByteBuffer(bytes: data))
    }

    /// Whether a status goes out: not when the connection is told GOAWAY or dropped instead.
    var isAnswered: Bool {
        switch self.connectionAction {
        case .goAway, .drop: false
        case .raiseStreamLimit, .none: true
        }
    }

    /// What to do to the connection a response belongs to.
    enum ConnectionAction {
        /// Raise `MAX_CONCURRENT_STREAMS` from 1 to the configured value: the first request authenticated.
        case raiseStreamLimit
        /// Send GOAWAY with `{"reason": …}` instead of answering, then close the connection.
        case goAway(reason: String)
        /// Close the TCP connection at once, answering nothing.
        case drop
    }
}

/// An APNs error answer: status, reason and, for 410, the time the token became invalid.
struct APNsFailure: Error, Hashable {
    var status: Int
    var reason: String
    var timestamp: Int?

    init(_ status: Int, _ reason: String, timestamp: Int? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
    }
}
