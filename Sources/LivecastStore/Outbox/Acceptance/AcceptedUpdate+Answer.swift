import Foundation
import LivecastCore

extension AcceptedUpdate: Encodable {
    /// The API's `202` answer to the update, as JSON with sorted keys: what a request with an idempotency key is
    /// answered again, byte for byte, when it is retried. The accepting transaction keeps it with the update
    /// (``OutboxRow``, ``ActivityUpdateBatch``), so it is never missing once the update is committed. A replay's is
    /// the answer kept for the first request (``keptAnswer``).
    package var answer: String {
        if let keptAnswer { return keptAnswer }
        // Encoding numbers, booleans and fixed strings cannot fail.
        return String(decoding: (try? JSONEncoder.sorted.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case updateID = "updateId"
        case timestamp, priority, priorityDowngraded, coalesced, dismissalDateClamped, warnings
    }

    /// The stored update as the `202` answers it (a replay answers its ``answer``, the text kept): `priorityDowngraded`
    /// and `dismissalDateClamped` only when `true`, and `warnings`, notes for the caller, only when there are some.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.updateID, forKey: .updateID)
        try container.encode(self.timestamp, forKey: .timestamp)
        try container.encode(self.priority, forKey: .priority)
        try container.encode(self.coalesced, forKey: .coalesced)
        if self.priorityDowngraded { try container.encode(true, forKey: .priorityDowngraded) }
        if self.dismissalDateClamped { try container.encode(true, forKey: .dismissalDateClamped) }
        let warnings = [
            self.dismissalDateClamped ? "dismissalDate was later than 4 hours after the end; it was clamped" : nil,
            self.priorityDowngraded ? "the app's hourly priority-10 budget is spent; sent at priority 5" : nil,
        ].compactMap { $0 }
        if !warnings.isEmpty { try container.encode(warnings, forKey: .warnings) }
    }
}
