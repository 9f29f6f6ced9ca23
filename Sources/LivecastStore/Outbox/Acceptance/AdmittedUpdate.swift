import LivecastCore

/// One request that its target's rules let through (``UpdateAcceptance``), with the outbox row it makes.
struct AdmittedUpdate<Target: UpdateTarget> {
    /// The request's place in its round.
    var index: Int
    var content: UpdateContent
    var target: Target
    var row: OutboxRow
    var dismissalDateClamped = false

    /// Orders the update after its target's last and makes its payload.
    /// - Parameters:
    ///   - priority: The priority asked for (``OutboxRules/priority(requested:hasAlert:)``).
    ///   - now: The database's time, in UNIX seconds.
    /// - Throws: ``StoreError`` `staleTimestamp`, `payloadTooLarge` or `invalid`.
    init(_ content: UpdateContent, appID: Int64, priority: Int, index: Int, target: Target, now: Int) throws {
        self.index = index
        self.content = content
        self.target = target
        let (timestamp, coalesced) = try OutboxRules.timestamp(requested: content.timestamp, last: target.lastTimestamp, now: now)
        self.row = OutboxRow(
            appID: appID,
            content: LiveActivityPayload(event: content.event, timestamp: timestamp),
            payload: "",
            requestedPriority: priority,
            sentPriority: priority,
            idempotencyKey: content.idempotencyKey,
            coalesced: coalesced && target.coalesces
        )
        try self.encode(timestamp: timestamp)
    }

    /// Makes the payload at `timestamp`, checks it, and points the row at the target (a feed's channel payload is
    /// the payload).
    /// - Throws: ``StoreError`` `payloadTooLarge` or `invalid`.
    mutating func encode(timestamp: Int) throws {
        (self.row.content, self.row.payload, self.dismissalDateClamped) = try self.target.payload(for: self.content, at: timestamp)
        try self.target.address(&self.row)
    }

    /// What its caller is told once its row is written.
    func accepted(updateID: Int64) -> AcceptedUpdate {
        self.row.accepted(updateID: updateID, dismissalDateClamped: self.dismissalDateClamped)
    }
}
