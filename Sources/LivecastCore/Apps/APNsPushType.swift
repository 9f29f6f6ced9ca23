/// The kind of a push, as APNs reads it from the `apns-push-type` header.
///
/// An open set of values, not an enum: a push type APNs adds later becomes a new static member without breaking
/// code that switches over the ones it knows. The push type also decides the `apns-topic` a device push needs;
/// see ``topic(forBundleID:)``.
///
/// ```swift
/// let push = DevicePush(deviceToken: token, bundleID: "com.example.game", payload: bytes, pushType: .liveactivity)
/// push.topic  // "com.example.game.push-type.liveactivity"
/// ```
public struct APNsPushType: Sendable, Hashable, CustomStringConvertible {
    private enum Value: String, Sendable, Hashable {
        case alert
        case background
        case location
        case voip
        case complication
        case fileprovider
        case mdm
        case liveactivity
        case pushtotalk
        case widgets
        case controls
    }

    private let value: Value

    private init(_ value: Value) {
        self.value = value
    }

    /// Parses an `apns-push-type` header value, exactly as APNs spells it (lowercase).
    /// - Parameter headerValue: The header's value, for example `liveactivity`.
    /// - Returns: `nil` when the value names no push type APNs documents.
    public init?(headerValue: String) {
        guard let value = Value(rawValue: headerValue) else { return nil }
        self.value = value
    }

    /// The `apns-push-type` header value, for example `liveactivity`.
    public var headerValue: String { self.value.rawValue }

    /// The `apns-push-type` header value.
    public var description: String { self.headerValue }

    /// A notification the user sees or hears: an alert, a badge or a sound. The topic is the bundle id.
    public static let alert = Self(.alert)
    /// Content delivered in the background, with no user interaction; send it at priority `5`. The topic is the
    /// bundle id.
    public static let background = Self(.background)
    /// A request for the device's location. The topic is the bundle id with `.location-query` appended; token-based
    /// authentication only.
    public static let location = Self(.location)
    /// An incoming Voice-over-IP call. The topic is the bundle id with `.voip` appended.
    public static let voip = Self(.voip)
    /// An update to a watchOS app's complications. The topic is the bundle id with `.complication` appended.
    public static let complication = Self(.complication)
    /// A change for a File Provider extension. The topic is the bundle id with `.pushkit.fileprovider` appended.
    public static let fileprovider = Self(.fileprovider)
    /// A request that a managed device contact its MDM server. The topic is the UID in the subject of the MDM push
    /// certificate, not derived from a bundle id.
    public static let mdm = Self(.mdm)
    /// An update, start or end of a Live Activity. The topic is the bundle id with `.push-type.liveactivity` appended.
    public static let liveactivity = Self(.liveactivity)
    /// A Push to Talk push. The topic is the bundle id with `.voip-ptt` appended.
    public static let pushtotalk = Self(.pushtotalk)
    /// A WidgetKit reload. The topic is the bundle id with `.push-type.widgets` appended.
    public static let widgets = Self(.widgets)
    /// A reload of a control's content. The topic is the bundle id with `.push-type.controls` appended.
    public static let controls = Self(.controls)

    /// What APNs wants after the bundle id in `apns-topic`; `nil` when the topic is not made from a bundle id.
    private var topicSuffix: String? {
        switch self.value {
        case .alert, .background: ""
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .mdm: nil
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The `apns-topic` of a push of this type to an app, for example `com.example.game.push-type.liveactivity`
    /// for ``liveactivity``.
    /// - Parameter bundleID: The app's bundle id, without a suffix.
    /// - Returns: `nil` for ``mdm``, whose topic comes from the MDM push certificate.
    public func topic(forBundleID bundleID: String) -> String? {
        self.topicSuffix.map { bundleID + $0 }
    }

    /// The bundle id in a topic of this type: the inverse of ``topic(forBundleID:)``.
    /// - Parameter topic: An `apns-topic` value.
    /// - Returns: `nil` when the topic lacks this type's suffix, and always for ``mdm``.
    public func bundleID(fromTopic topic: String) -> String? {
        guard let suffix = self.topicSuffix, topic.hasSuffix(suffix) else { return nil }
        return String(Substring(topic.utf8.dropLast(suffix.utf8.count)))
    }
}
