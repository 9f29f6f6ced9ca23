/// The lifecycle facts Livecast reports to backends, by the name an event carries (`sql/0035_events.sql` writes
/// them, in the transaction of the fact).
package enum EventType: String, Sendable, Hashable, CaseIterable, Codable {
    case activityRegistered = "activity.registered"
    case activityTokenRotated = "activity.token_rotated"
    case activityEnded = "activity.ended"
    case activityDismissed = "activity.dismissed"
    case activityRenewed = "activity.renewed"
    case startSent = "start.sent"
    case startUnregistered = "start.unregistered"
    case startDropped = "start.dropped"
    case updateCompleted = "update.completed"
    case updateRefused = "update.refused"
    case tokenInvalidated = "token.invalidated"
    case pushDeadLettered = "push.dead_lettered"
    case sendingHeld = "sending.held"
    case sendingResumed = "sending.resumed"
    case channelCreated = "channel.created"
    case channelRetired = "channel.retired"
    case channelMissingAtAPNs = "channel.missing_at_apns"
    /// A day where Apple's exported figures and Livecast's diverge past the threshold (`sql/0046_apple_metrics.sql`).
    case deliveryDiverged = "delivery.diverged"

    /// Reads a list of event type names. - Throws: ``StoreError`` `invalid` naming the first unknown one.
    package static func parse(_ names: [String], field: String) throws(StoreError) -> [EventType] {
        var types: [EventType] = []
        for name in names {
            guard let type = EventType(rawValue: name) else {
                let known = Self.allCases.map(\.rawValue).joined(separator: ", ")
                throw StoreError(.invalid, "unknown event type '\(name)' (known: \(known))", field: field)
            }
            if !types.contains(type) { types.append(type) }
        }
        return types
    }
}
