/// `apns-expiration`: until when APNs keeps trying to deliver a push it could not deliver at once.
///
/// An open set of values, as APNSwift's `APNSNotificationExpiration`: none, at once or never again, or a moment.
public struct APNsExpiration: Sendable, Hashable {
    /// The header's value, UNIX seconds; `nil` when the header is left out.
    public let secondsSince1970: Int?

    private init(_ secondsSince1970: Int?) {
        self.secondsSince1970 = secondsSince1970
    }

    /// No `apns-expiration` header: APNs keeps the push for a while of its choosing.
    public static let none = Self(nil)
    /// `0`: delivered at once or not at all. A broadcast on a No Message Stored channel must carry it.
    public static let immediately = Self(0)

    /// Kept until this moment.
    /// - Parameter seconds: UNIX seconds.
    public static func timeIntervalSince1970InSeconds(_ seconds: Int) -> Self { Self(seconds) }
}
