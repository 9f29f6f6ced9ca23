package import Foundation

/// The id Livecast gives each push it sends (`apns-id` on a device push, `apns-request-id` on a broadcast): a
/// canonical UUID that encodes which update went to which target, so any push can be looked up by the id APNs
/// shows (its Push Notifications Console, a device's logs) without a row written per successful push.
///
/// The UUID is of version 8 (custom): 56 bits of update id, the target's kind (4 bits) and 62 bits of target id,
/// around the version nibble and the variant bits. A retried push keeps its id: it is the same notification.
package struct PushID: Sendable, Hashable, CustomStringConvertible {
    /// What a push went to; each kind is a row of its own table.
    package enum TargetKind: UInt8, Sendable, Hashable, CaseIterable {
        /// A token-based activity (`activities.id`), by its update token.
        case activity = 1
        /// A push-to-start token (`push_to_start_tokens.id`): a start.
        case pushToStart = 2
        /// A broadcast channel (`channels.id`).
        case channel = 3
        /// A renewal of an activity (`activities.id`, the one renewed), sent to its device's push-to-start token; the
        /// update is the feed's latest, whose content it carries.
        case renewal = 4
    }

    /// The largest update id an id can hold (2^56 − 1).
    package static let maximumUpdateID: Int64 = (1 << 56) - 1
    /// The largest target id an id can hold (2^62 − 1).
    package static let maximumTargetID: Int64 = (1 << 62) - 1

    /// The update (`updates.id`).
    package let updateID: Int64
    package let targetKind: TargetKind
    /// The target's row id in its kind's table.
    package let targetID: Int64

    /// The id of a push of one update to one target.
    /// - Returns: `nil` when an id is negative or beyond what the UUID holds (``maximumUpdateID``,
    ///   ``maximumTargetID``): such a push goes without an id of Livecast's, and APNs makes one.
    package init?(updateID: Int64, targetKind: TargetKind, targetID: Int64) {
        guard (0...Self.maximumUpdateID).contains(updateID), (0...Self.maximumTargetID).contains(targetID) else { return nil }
        self.updateID = updateID
        self.targetKind = targetKind
        self.targetID = targetID
    }

    /// Reads an id back from its text (any letter case).
    /// - Returns: `nil` unless the text is a UUID in 8-4-4-4-12 form laid out as Livecast lays its ids out.
    package init?(_ text: some StringProtocol) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var high: UInt8?
        var position = 0
        for character in text.utf8 {
            defer { position += 1 }
            if [8, 13, 18, 23].contains(position) {
                guard character == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let nibble = Self.nibble(character) else { return nil }
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard position == 36, bytes.count == 16, bytes[6] >> 4 == 8, bytes[8] >> 6 == 0b10,
            let kind = TargetKind(rawValue: bytes[6] & 0x0F)
        else { return nil }
        var updateID: Int64 = 0
        for byte in bytes[0..<6] { updateID = updateID << 8 | Int64(byte) }
        updateID = updateID << 8 | Int64(bytes[7])
        var targetID = Int64(bytes[8] & 0x3F)
        for byte in bytes[9..<16] { targetID = targetID << 8 | Int64(byte) }
        self.init(updateID: updateID, targetKind: kind, targetID: targetID)
    }

    /// The id as a UUID, as a push carries it (`DevicePush.apnsID`, `BroadcastPush.requestID`).
    package var uuid: UUID {
        let b = self.bytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The UUID's 16 bytes.
    private var bytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: self.updateID >> (48 - 8 * index)) }
        bytes[6] = 0x80 | self.targetKind.rawValue
        bytes[7] = UInt8(truncatingIfNeeded: self.updateID)
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: self.targetID >> 56) & 0x3F
        for index in 9..<16 { bytes[index] = UInt8(truncatingIfNeeded: self.targetID >> (120 - 8 * index)) }
        return bytes
    }

    /// The canonical lowercase text APNs wants: `xxxxxxxx-xxxx-8xxx-xxxx-xxxxxxxxxxxx`.
    package var uuidString: String {
        let bytes = self.bytes
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    package var description: String { self.uuidString }

    /// The `apns-collapse-id` of every push-to-start of a feed: stable per device (each device gets its own push)
    /// and feed, so a start APNs delivers twice (a retry after a lost answer) starts one activity, not two.
    package static func startCollapseID(feedID: Int64) -> String { "livecast-start-\(feedID)" }

    /// The `apns-collapse-id` of the renewal of an activity: one per activity renewed, and so per generation of the
    /// device's activity of the feed, so a renewal APNs delivers twice starts one activity, and never collapses into
    /// the start or renewal it replaces.
    package static func renewalCollapseID(activityID: Int64) -> String { "livecast-renew-\(activityID)" }

    private static func nibble(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
