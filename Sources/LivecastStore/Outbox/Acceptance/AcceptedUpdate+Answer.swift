import Foundation
import LivecastCore

extension AcceptedUpdate {
    /// The API's `202` answer to the update, as JSON with sorted keys: what a request with an idempotency key is
    /// answered again, byte for byte, when it is retried. The accepting transaction keeps it with the update
    /// (``OutboxRow``, ``ActivityUpdateBatch``), so it is never missing once the update is committed. A replay's is
    /// the answer kept for the first request (``keptAnswer``).
    package var answer: String {
        if let keptAnswer { return keptAnswer }
        // Encoding a struct of numbers, booleans and fixed strings cannot fail.
        return String(decoding: (try? JSONEncoder.sorted.encode(AcceptedAnswer(self))) ?? Data(), as: UTF8.self)
    }
}

/// `202` for an accepted update or end, once it is stored.
private struct AcceptedAnswer: Encodable {
    let updateId: Int64
    /// The timestamp it goes out with.
    let timestamp: Int
    let priority: Int
    /// Present and `true` when the app's hourly priority-10 budget was spent, so it goes out at priority 5.
    let priorityDowngraded: Bool?
    /// Whether it came in the same second as the target's last update: it replaced that one (never sent) if it was
    /// still waiting, else it goes out at the next second.
    let coalesced: Bool
    /// Present and `true` when `dismissalDate` was brought back to 4 hours after the end.
    let dismissalDateClamped: Bool?
    /// Notes for the caller, such as the clamping.
    let warnings: [String]?

    init(_ accepted: AcceptedUpdate) {
        self.updateId = accepted.updateID
        self.timestamp = accepted.timestamp
        self.priority = accepted.priority
        self.priorityDowngraded = accepted.priorityDowngraded ? true : nil
        self.coalesced = accepted.coalesced
        self.dismissalDateClamped = accepted.dismissalDateClamped ? true : nil
        var warnings: [String] = []
        if accepted.dismissalDateClamped { warnings.append("dismissalDate was later than 4 hours after the end; it was clamped") }
        if accepted.priorityDowngraded { warnings.append("the app's hourly priority-10 budget is spent; sent at priority 5") }
        self.warnings = warnings.isEmpty ? nil : warnings
    }
}
