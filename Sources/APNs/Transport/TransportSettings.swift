import NIOCore

/// How the transport behaves; see ``APNsClient/Configuration``.
struct TransportSettings: Sendable {
    /// How often one request may be lost with its connection (sent, unanswered) before it fails.
    var maximumAttempts: Int
    /// A PING goes out after this long without a frame from the server.
    var idlePingInterval: TimeAmount
    /// The connection closes when a PING is unanswered for this long.
    var pingTimeout: TimeAmount
}
