/// Where a Live Activity payload is sent; each has its own size limit (APNS-REFERENCE §2.2, §3.2).
public enum PushDestination: Sendable, Hashable {
    /// A device token, through `POST /3/device/{token}`.
    case device
    /// A broadcast channel, through `POST /4/broadcasts/apps/{bundleId}`.
    case broadcast

    /// The largest payload APNs accepts, in bytes: 4,096 for a device push, 5,120 for a broadcast.
    public var maximumPayloadSize: Int {
        switch self {
        case .device: 4096
        case .broadcast: 5120
        }
    }
}
