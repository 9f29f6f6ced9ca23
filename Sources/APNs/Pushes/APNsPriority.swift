/// `apns-priority`: how urgently APNs delivers a push.
///
/// An open set of values, not an enum, as APNSwift has it: a priority Apple adds later becomes a new static member
/// without breaking code that switches over the ones it knows.
public struct APNsPriority: Sendable, Hashable, CustomStringConvertible {
    /// The header's value: `10` or `5`.
    public let rawValue: Int

    private init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    /// A priority from its header value.
    /// - Returns: `nil` for a value APNs does not document for Live Activities (anything but `10` and `5`).
    public init?(rawValue: Int) {
        switch rawValue {
        case 10: self = .immediately
        case 5: self = .consideringDevicePower
        default: return nil
        }
    }

    /// `10`: sent at once. A Live Activity's priority-10 pushes count against a budget the system keeps per app.
    public static let immediately = Self(10)
    /// `5`: sent when the device's power allows; free of the budget.
    public static let consideringDevicePower = Self(5)

    /// The header's value.
    public var description: String { String(self.rawValue) }
}
