/// A broadcast channel's `message-storage-policy`: whether APNs keeps a channel's latest message for a device that
/// subscribes, or is offline, later.
///
/// An open set of values: a policy Apple adds later becomes a new static member.
public struct APNsChannelStoragePolicy: Sendable, Hashable, CustomStringConvertible {
    /// The value APNs reads: `0` or `1`.
    public let rawValue: Int

    private init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    /// A policy from the value APNs reads. - Returns: `nil` for one APNs does not document.
    public init?(rawValue: Int) {
        switch rawValue {
        case 0: self = .noMessageStored
        case 1: self = .mostRecentMessageStored
        default: return nil
        }
    }

    /// `0`, No Message Stored: a broadcast reaches the devices subscribed now; its `apns-expiration` must be `0`.
    public static let noMessageStored = Self(0)
    /// `1`, Most Recent Message Stored: APNs keeps the latest broadcast, at most until its expiration (8 hours).
    public static let mostRecentMessageStored = Self(1)

    /// The value APNs reads.
    public var description: String { String(self.rawValue) }
}
