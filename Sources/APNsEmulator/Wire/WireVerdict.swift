/// What ``WireJudge/judge(_:)`` found in a wire log.
public struct WireVerdict: Sendable, CustomStringConvertible {
    /// How many requests were judged.
    public var requests: Int
    /// How many were answered `200`.
    public var accepted: Int
    /// Requests whose timestamp is not newer than one their target had already accepted (answered `200` to a request
    /// that arrived earlier), other than an identical re-send of the newest accepted push (same digest).
    /// Requests without a timestamp are not judged.
    public var orderingViolations: [WireViolation]
    /// Requests that arrived at a device token after that token had been answered `410`.
    public var sentAfterUnregistered: [WireViolation]
    /// Requests that arrived at a target after it had accepted a push with event `end`, other than an identical
    /// re-send of that end.
    public var sentAfterEnd: [WireViolation]
    /// Requests APNs accepted that the simulated devices then dropped without a word to the server
    /// (``WireRecord/deviceDropped``): a start over the device's push-to-start budget, an alert key ActivityKit does
    /// not document, a start missing what it needs.
    public var droppedByDevices: [WireViolation]
    /// Requests that could not change what the device shows: every ordering violation, plus identical re-sends of
    /// the newest push their target had already accepted.
    public var wastedPushes: Int
    /// The last accepted record (highest sequence answered `200`) per target.
    public var lastAccepted: [String: WireRecord]

    /// Creates a verdict with nothing found.
    public init() {
        self.requests = 0
        self.accepted = 0
        self.orderingViolations = []
        self.sentAfterUnregistered = []
        self.sentAfterEnd = []
        self.droppedByDevices = []
        self.wastedPushes = 0
        self.lastAccepted = [:]
    }

    /// Whether no rule was broken: no ordering violation, nothing sent after `410` or after an accepted end, nothing
    /// the devices dropped in silence. Wasted identical re-sends do not count against it.
    public var isClean: Bool {
        self.orderingViolations.isEmpty && self.sentAfterUnregistered.isEmpty && self.sentAfterEnd.isEmpty
            && self.droppedByDevices.isEmpty
    }

    /// The figures, then every violation on a line of its own.
    public var description: String {
        var lines = [
            "\(self.requests) requests, \(self.accepted) accepted, \(self.wastedPushes) wasted; "
                + "\(self.orderingViolations.count) out of order, \(self.sentAfterUnregistered.count) after 410, "
                + "\(self.sentAfterEnd.count) after end, \(self.droppedByDevices.count) dropped by devices"
        ]
        for violation in self.orderingViolations + self.sentAfterUnregistered + self.sentAfterEnd + self.droppedByDevices {
            lines.append("  \(violation)")
        }
        return lines.joined(separator: "\n")
    }
}
