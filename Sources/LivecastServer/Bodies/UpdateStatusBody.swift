import LivecastStore

/// `GET /v1/apps/{bundleId}/updates/{updateId}`.
struct UpdateStatusBody: Encodable {
    let updateId: Int64
    let event: String
    let timestamp: Int64
    let priority: Int
    /// `pending`, `dispatching`, `sent`, `superseded` or `failed`.
    let status: String
    let targets: Targets

    /// Per-target counts.
    struct Targets: Encodable {
        let pending: Int
        let sent: Int64
        /// Never sent: a newer update in the same second replaced it.
        let superseded: Int
        let failed: Int64
        /// Failures by APNs' reason.
        let failedByReason: [String: Int]
    }

    init(_ status: UpdateStatus) {
        self.updateId = status.updateID
        self.event = status.event
        self.timestamp = status.timestamp
        self.priority = status.priority
        self.status = status.status
        self.targets = Targets(
            pending: status.pending,
            sent: status.sent,
            superseded: status.superseded,
            failed: status.failed,
            failedByReason: status.failedByReason
        )
    }
}

/// `GET` or `DELETE /v1/apps/{bundleId}/updates/{updateId}` of a scheduled update not in the outbox.
struct ScheduledStatusBody: Encodable {
    let updateId: Int64
    /// `scheduled`, `cancelled`, or `refused` when its checks failed at its `sendAt`.
    let status: String
    let sendAt: Int64
    /// Why it was refused: the error it got.
    let reason: String?

    init(_ scheduled: ScheduledUpdates.Status) {
        self.updateId = scheduled.id
        self.status = scheduled.status
        self.sendAt = scheduled.sendAt
        self.reason = scheduled.refusal
    }
}
