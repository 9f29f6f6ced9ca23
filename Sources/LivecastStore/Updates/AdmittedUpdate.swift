import LivecastCore

/// One request of an ``ActivityUpdateBatch`` that its activity's rules let through, with the outbox row it makes.
struct AdmittedUpdate {
    /// The request's place in its batch.
    var index: Int
    var content: UpdateContent
    var target: ActivityTarget
    var row: OutboxRow
    var dismissalDateClamped = false

    /// The checks ``UpdateAcceptance`` makes before it writes, on one request and its locked activity.
    /// - Parameter now: The database's time, in UNIX seconds.
    /// - Throws: ``StoreError``, as ``ActivityUpdates/accept(_:)`` does.
    init(_ request: ActivityUpdates.Request, index: Int, row: ActivityTarget.Row, now: Int) throws {
        let content = request.content
        let priority = try OutboxRules.priority(requested: content.priority, hasAlert: content.alert != nil)
        self.index = index
        self.content = content
        self.target = try ActivityTarget.standalone(row)
        let (timestamp, coalesced) = try OutboxRules.timestamp(requested: content.timestamp, last: self.target.lastTimestamp, now: now)
        self.row = OutboxRow(
            appID: request.appID,
            content: LiveActivityPayload(event: content.event, timestamp: timestamp),
            payload: "",
            requestedPriority: priority,
            sentPriority: priority,
            idempotencyKey: content.idempotencyKey,
            coalesced: coalesced
        )
        self.target.address(&self.row)
        try self.encode(timestamp: timestamp)
    }

    /// Makes the payload at `timestamp` and checks it.
    /// - Throws: ``StoreError`` `payloadTooLarge` or `invalid`.
    mutating func encode(timestamp: Int) throws {
        (self.row.content, self.row.payload, self.dismissalDateClamped) = try self.target.payload(for: self.content, at: timestamp)
    }

    /// What its caller is told once its row is written.
    func accepted(updateID: Int64) -> AcceptedUpdate {
        self.row.accepted(updateID: updateID, dismissalDateClamped: self.dismissalDateClamped)
    }
}
