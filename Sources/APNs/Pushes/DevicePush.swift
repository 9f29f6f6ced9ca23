public import Foundation
public import LivecastCore

/// A push to one device token: `POST /3/device/{token}`.
public struct DevicePush: Sendable {
    /// The device token in hex.
    public var deviceToken: String
    /// The app's bundle id; the topic is derived from it and the push type.
    public var bundleID: String
    /// The payload bytes, for example from ``LivecastCore/LiveActivityPayload/validated(for:)``.
    public var payload: [UInt8]
    /// `apns-push-type`; it also decides ``topic``. Defaults to ``APNsPushType/liveactivity``.
    public var pushType: APNsPushType
    /// `apns-priority`: ``APNsPriority/immediately`` counts against the activity budget,
    /// ``APNsPriority/consideringDevicePower`` does not. Defaults to ``APNsPriority/immediately``.
    public var priority: APNsPriority
    /// `apns-expiration`. Defaults to ``APNsExpiration/none``: the header is left out.
    public var expiration: APNsExpiration
    /// `apns-id`, sent in its canonical lowercase form; APNs makes one when `nil`. Defaults to `nil`.
    public var apnsID: UUID?
    /// `apns-collapse-id`, at most 64 bytes. Defaults to `nil`.
    public var collapseID: String?

    /// Creates a device push.
    /// - Parameters:
    ///   - deviceToken: The device token in hex.
    ///   - bundleID: The app's bundle id.
    ///   - payload: The payload bytes.
    ///   - pushType: `apns-push-type`. Defaults to ``APNsPushType/liveactivity``.
    ///   - priority: `apns-priority`. Defaults to ``APNsPriority/immediately``.
    ///   - expiration: `apns-expiration`. Defaults to ``APNsExpiration/none``.
    ///   - apnsID: `apns-id`. Defaults to none.
    ///   - collapseID: `apns-collapse-id`. Defaults to none.
    public init(
        deviceToken: String,
        bundleID: String,
        payload: [UInt8],
        pushType: APNsPushType = .liveactivity,
        priority: APNsPriority = .immediately,
        expiration: APNsExpiration = .none,
        apnsID: UUID? = nil,
        collapseID: String? = nil
    ) {
        self.deviceToken = deviceToken
        self.bundleID = bundleID
        self.payload = payload
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.apnsID = apnsID
        self.collapseID = collapseID
    }

    /// `apns-topic`: the bundle id with the push type's suffix, for example `<bundle id>.push-type.liveactivity`
    /// (see ``APNsPushType/topic(forBundleID:)``); the bundle id as given for ``APNsPushType/mdm``.
    public var topic: String {
        self.pushType.topic(forBundleID: self.bundleID) ?? self.bundleID
    }
}

/// A push to a broadcast channel: `POST /4/broadcasts/apps/{bundleId}`.
public struct BroadcastPush: Sendable {
    /// The channel's base64 id.
    public var channelID: String
    /// The app's bundle id, without a push-type suffix.
    public var bundleID: String
    /// The payload bytes (at most 5,120).
    public var payload: [UInt8]
    /// `apns-priority`. Defaults to ``APNsPriority/immediately``.
    public var priority: APNsPriority
    /// `apns-expiration`: ``APNsExpiration/immediately`` on a No Message Stored channel; on a Most Recent Message
    /// Stored channel, when the stored message expires (at most 8 hours ahead). Defaults to
    /// ``APNsExpiration/immediately``.
    public var expiration: APNsExpiration
    /// `apns-request-id`, sent in its canonical lowercase form; APNs makes one when `nil`. Defaults to `nil`.
    public var requestID: UUID?

    /// Creates a broadcast.
    /// - Parameters:
    ///   - channelID: The channel's id.
    ///   - bundleID: The app's bundle id.
    ///   - payload: The payload bytes.
    ///   - priority: `apns-priority`. Defaults to ``APNsPriority/immediately``.
    ///   - expiration: `apns-expiration`. Defaults to ``APNsExpiration/immediately``.
    ///   - requestID: `apns-request-id`. Defaults to none.
    public init(
        channelID: String,
        bundleID: String,
        payload: [UInt8],
        priority: APNsPriority = .immediately,
        expiration: APNsExpiration = .immediately,
        requestID: UUID? = nil
    ) {
        self.channelID = channelID
        self.bundleID = bundleID
        self.payload = payload
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
    }
}
