/// What ``WireJudge`` remembers of one target while it walks the wire log in arrival order.
struct TargetHistory {
    /// The newest timestamp accepted so far.
    private var newestTimestamp: Int?
    /// The first accepted record with ``newestTimestamp``, named in violations.
    private var newest: WireRecord?
    /// The digests of the accepted records with ``newestTimestamp``: identical re-sends.
    private var newestDigests: Set<String> = []
    /// The first `410` answer, after which nothing should be sent.
    private var unregistered: WireRecord?
    /// The first accepted end, after which only its identical re-send may be sent.
    private var end: WireRecord?

    /// Judges a request against what the target had accepted before it arrived.
    func judge(_ record: WireRecord, into verdict: inout WireVerdict) {
        if let dropped = record.deviceDropped {
            verdict.droppedByDevices.append(WireViolation(record: record, rule: "accepted, then dropped by the device: \(dropped)"))
        }
        if let unregistered = self.unregistered {
            verdict.sentAfterUnregistered.append(
                WireViolation(record: record, rule: "sent after 410 \(unregistered.reason ?? "Unregistered") (#\(unregistered.sequence))")
            )
        }
        if let end = self.end, record.bodyDigest != end.bodyDigest {
            verdict.sentAfterEnd.append(
                WireViolation(record: record, rule: "sent after accepted end \(end.timestamp.map(String.init) ?? "-") (#\(end.sequence))")
            )
        }
        guard let timestamp = record.timestamp, let newestTimestamp = self.newestTimestamp, timestamp <= newestTimestamp else {
            return
        }
        verdict.wastedPushes += 1
        if timestamp == newestTimestamp, self.newestDigests.contains(record.bodyDigest) { return }
        let newestSequence = self.newest.map { " (#\($0.sequence))" } ?? ""
        verdict.orderingViolations.append(
            WireViolation(record: record, rule: "timestamp \(timestamp) not newer than accepted \(newestTimestamp)\(newestSequence)")
        )
    }

    /// Takes in a request's answer, which counts for the requests that arrive after it.
    mutating func learn(_ record: WireRecord) {
        if record.status == 410, self.unregistered == nil {
            self.unregistered = record
        }
        guard record.isAccepted else { return }
        if record.event == "end", self.end == nil {
            self.end = record
        }
        guard let timestamp = record.timestamp else { return }
        switch self.newestTimestamp {
        case .some(let newest) where timestamp < newest:
            break
        case .some(let newest) where timestamp == newest:
            self.newestDigests.insert(record.bodyDigest)
        default:
            self.newestTimestamp = timestamp
            self.newest = record
            self.newestDigests = [record.bodyDigest]
        }
    }
}
