/// One device push or broadcast as it reached the emulator, and what the emulator answered: an entry of the wire log
/// that ``APNsEmulator/Configuration/recordsWire`` turns on.
///
/// Requests answered by an injected fault are recorded too: a `429` or `5xx` with its status, and a GOAWAY or a dropped
/// connection with no status, since no answer was sent.
public struct WireRecord: Sendable, Hashable, Codable {
    /// Arrival order, counted from 0 when the emulator started; ``APNsEmulator/clearWireRecords()`` does not restart it.
    public var sequence: Int
    /// When the request arrived, by the wall clock, in seconds since 1970.
    public var arrivedAt: Double
    /// Where the request went: `device:<lowercase hex token>` or `channel:<channel id>`.
    public var target: String
    /// `aps.timestamp` of the JSON body, if any.
    public var timestamp: Int?
    /// `aps.event` (`start`, `update`, `end`), if any.
    public var event: String?
    /// The hex SHA-256 of the exact body bytes: an identical re-send has the same target and the same digest.
    public var bodyDigest: String
    /// `aps.content-state` written compactly with sorted keys, for reading what a device would show; `nil` when absent.
    public var contentState: String?
    /// The status answered (200, 410, 503…), or `nil` when no answer was sent (GOAWAY, dropped connection).
    public var status: Int?
    /// The APNs reason of a non-200 answer.
    public var reason: String?
    /// When the answer was made, by the wall clock, in seconds since 1970; `nil` when no answer was sent.
    public var answeredAt: Double?
    /// Why the simulated devices dropped a push APNs accepted, when it is a drop iOS makes without telling the server
    /// (``IgnoredPush/Reason/silentDrops``: a start over the device's push-to-start budget, an alert key ActivityKit
    /// does not document, a start missing what it needs); `nil` otherwise. ``WireJudge`` counts each as a violation.
    public var deviceDropped: String?

    /// Creates a record.
    /// - Parameters:
    ///   - sequence: Arrival order.
    ///   - arrivedAt: Arrival time, in seconds since 1970.
    ///   - target: `device:<token>` or `channel:<id>`.
    ///   - timestamp: `aps.timestamp`. Defaults to `nil`.
    ///   - event: `aps.event`. Defaults to `nil`.
    ///   - bodyDigest: The hex SHA-256 of the body.
    ///   - contentState: `aps.content-state` as compact JSON. Defaults to `nil`.
    ///   - status: The status answered. Defaults to `nil` (no answer).
    ///   - reason: The APNs reason of a non-200 answer. Defaults to `nil`.
    ///   - answeredAt: When it was answered, in seconds since 1970. Defaults to `nil`.
    ///   - deviceDropped: Why the devices silently dropped the accepted push. Defaults to `nil`.
    public init(
        sequence: Int,
        arrivedAt: Double,
        target: String,
        timestamp: Int? = nil,
        event: String? = nil,
        bodyDigest: String,
        contentState: String? = nil,
        status: Int? = nil,
        reason: String? = nil,
        answeredAt: Double? = nil,
        deviceDropped: String? = nil
    ) {
        self.sequence = sequence
        self.arrivedAt = arrivedAt
        self.target = target
        self.timestamp = timestamp
        self.event = event
        self.bodyDigest = bodyDigest
        self.contentState = contentState
        self.status = status
        self.reason = reason
        self.answeredAt = answeredAt
        self.deviceDropped = deviceDropped
    }

    /// Whether the emulator answered `200`.
    public var isAccepted: Bool { self.status == 200 }
}
