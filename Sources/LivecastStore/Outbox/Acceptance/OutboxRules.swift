import LivecastCore

/// The rules every update follows when it is accepted, whatever its target (docs/ARCHITECTURE.md, invariants 1, 2, 4
/// and 7), as pure functions: what they decide needs no database. ``OutboxStatements`` holds the statements that
/// apply them, and ``UpdateAcceptance`` their order.
enum OutboxRules {
    /// The longest an ended activity may stay on the Lock Screen after its end.
    static let maximumDismissalDelay = 4 * 3600

    /// The timestamp an update goes out with: after the target's last one. An update in the same second as the last
    /// is coalesced: it takes the last one's place and timestamp if that one is still waiting
    /// (``UpdateAcceptance``), else it goes out one second later, held until that second begins. An explicit
    /// timestamp older than the last is refused.
    /// - Parameters:
    ///   - requested: The client's timestamp; the database's time when `nil`.
    ///   - last: The target's last accepted timestamp.
    ///   - now: The database's time, in UNIX seconds.
    static func timestamp(requested: Int?, last: Int?, now: Int) throws(StoreError) -> (timestamp: Int, coalesced: Bool) {
        let timestamp = requested ?? now
        guard let last else { return (timestamp, false) }
        if timestamp < last, requested != nil {
            throw StoreError(.staleTimestamp, "timestamp \(timestamp) is older than the last accepted, \(last)", field: "timestamp")
        }
        return timestamp <= last ? (last + 1, true) : (timestamp, false)
    }

    /// 10 when asked for or when the update carries an alert, else 5.
    static func priority(requested: Int?, hasAlert: Bool) throws(StoreError) -> Int {
        let priority = requested ?? (hasAlert ? 10 : 5)
        guard priority == 5 || priority == 10 else { throw StoreError(.invalid, "priority must be 5 or 10", field: "priority") }
        return priority
    }

    /// An end's `dismissal-date`, at most 4 hours after the end. - Returns: the date and whether it was clamped.
    static func dismissalDate(requested: Int?, timestamp: Int) -> (date: Int?, clamped: Bool) {
        guard let requested else { return (nil, false) }
        let date = min(requested, timestamp + Self.maximumDismissalDelay)
        return (date, date != requested)
    }

    /// The payload's bytes, checked against ActivityKit's rules and the destination's size limit.
    /// - Throws: ``StoreError`` `payloadTooLarge` with the measured size, or `invalid` naming the field.
    static func encode(_ payload: LiveActivityPayload, for destination: PushDestination) throws(StoreError) -> [UInt8] {
        do {
            return try payload.validated(for: destination)
        } catch {
            if error.code == .payloadTooLarge { throw StoreError(.payloadTooLarge, error.message, field: "contentState") }
            throw StoreError(.invalid, error.message, field: error.field.map(Self.requestField))
        }
    }

    /// The API's name for a payload key: `stale-date` is `staleDate` in a request.
    static func requestField(_ payloadKey: String) -> String {
        let words = payloadKey.split(separator: "-")
        return words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }
}
