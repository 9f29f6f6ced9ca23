/// A place in an app's event feed: the events after it are those of later transactions, or of the same transaction
/// with a later id. Written `<transaction>-<id>` (`812345-1023`); `0-0` is the feed's start. Clients treat it as
/// opaque.
package struct EventCursor: Sendable, Hashable, CustomStringConvertible {
    /// The feed's start: every event kept comes after it.
    package static let start = EventCursor(transactionID: 0, eventID: 0)

    /// The transaction that wrote the event (PostgreSQL's `xid8`).
    package var transactionID: UInt64
    /// The event's id.
    package var eventID: Int64

    package init(transactionID: UInt64, eventID: Int64) {
        self.transactionID = transactionID
        self.eventID = eventID
    }

    /// Reads a cursor the feed gave. - Throws: ``StoreError`` `invalid` naming `field` for anything else.
    package init(parsing text: String, field: String) throws(StoreError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let transactionID = UInt64(parts[0]), let eventID = Int64(parts[1]), eventID >= 0 else {
            throw StoreError(.invalid, "'\(text.prefix(64))' is not a cursor of the event feed (use the `next` of a page)", field: field)
        }
        self.init(transactionID: transactionID, eventID: eventID)
    }

    package var description: String { "\(self.transactionID)-\(self.eventID)" }
}
