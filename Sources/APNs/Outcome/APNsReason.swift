/// A `reason` from an APNs error answer (APNS-REFERENCE §4). Any string is kept, so a reason Apple adds later is
/// still reported; ``isDocumented`` says whether it is one of the documented ones.
public struct APNsReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { self.rawValue }

    // Device pushes (§4.1)
    public static let badCollapseId = Self(rawValue: "BadCollapseId")
    public static let badDeviceToken = Self(rawValue: "BadDeviceToken")
    public static let badExpirationDate = Self(rawValue: "BadExpirationDate")
    public static let badMessageId = Self(rawValue: "BadMessageId")
    public static let badPriority = Self(rawValue: "BadPriority")
    public static let badTopic = Self(rawValue: "BadTopic")
    public static let deviceTokenNotForTopic = Self(rawValue: "DeviceTokenNotForTopic")
    public static let duplicateHeaders = Self(rawValue: "DuplicateHeaders")
    public static let idleTimeout = Self(rawValue: "IdleTimeout")
    public static let invalidPushType = Self(rawValue: "InvalidPushType")
    public static let missingDeviceToken = Self(rawValue: "MissingDeviceToken")
    public static let missingTopic = Self(rawValue: "MissingTopic")
    public static let payloadEmpty = Self(rawValue: "PayloadEmpty")
    public static let topicDisallowed = Self(rawValue: "TopicDisallowed")
    public static let badCertificate = Self(rawValue: "BadCertificate")
    public static let badCertificateEnvironment = Self(rawValue: "BadCertificateEnvironment")
    public static let expiredProviderToken = Self(rawValue: "ExpiredProviderToken")
    public static let forbidden = Self(rawValue: "Forbidden")
    public static let invalidProviderToken = Self(rawValue: "InvalidProviderToken")
    public static let missingProviderToken = Self(rawValue: "MissingProviderToken")
    public static let unrelatedKeyIdInToken = Self(rawValue: "UnrelatedKeyIdInToken")
    public static let badEnvironmentKeyIdInToken = Self(rawValue: "BadEnvironmentKeyIdInToken")
    public static let badEnvironmentKeyInToken = Self(rawValue: "BadEnvironmentKeyInToken")
    public static let badPath = Self(rawValue: "BadPath")
    public static let methodNotAllowed = Self(rawValue: "MethodNotAllowed")
    public static let expiredToken = Self(rawValue: "ExpiredToken")
    public static let unregistered = Self(rawValue: "Unregistered")
    public static let payloadTooLarge = Self(rawValue: "PayloadTooLarge")
    public static let tooManyProviderTokenUpdates = Self(rawValue: "TooManyProviderTokenUpdates")
    public static let tooManyRequests = Self(rawValue: "TooManyRequests")
    public static let internalServerError = Self(rawValue: "InternalServerError")
    public static let serviceUnavailable = Self(rawValue: "ServiceUnavailable")
    public static let shutdown = Self(rawValue: "Shutdown")
    // Broadcasts and channel management (§4.2)
    public static let featureNotEnabled = Self(rawValue: "FeatureNotEnabled")
    public static let missingChannelId = Self(rawValue: "MissingChannelId")
    public static let badChannelId = Self(rawValue: "BadChannelId")
    public static let channelNotRegistered = Self(rawValue: "ChannelNotRegistered")
    public static let badRequestParams = Self(rawValue: "BadRequestParams")
    public static let badRequestPayload = Self(rawValue: "BadRequestPayload")
    public static let missingPushType = Self(rawValue: "MissingPushType")
    public static let cannotCreateChannelConfig = Self(rawValue: "CannotCreateChannelConfig")
    public static let topicMismatch = Self(rawValue: "TopicMismatch")
    /// Apple's broadcast table prints the 503 reason with a space.
    public static let serviceUnavailableWithSpace = Self(rawValue: "Service Unavailable")

    /// Every reason Apple documents.
    public static let documented: Set<APNsReason> = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken, .missingTopic,
        .payloadEmpty, .topicDisallowed, .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
        .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
        .badEnvironmentKeyInToken, .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
        .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered, .badRequestParams,
        .badRequestPayload, .missingPushType, .cannotCreateChannelConfig, .topicMismatch, .serviceUnavailableWithSpace,
    ]

    /// Whether Apple documents this reason.
    public var isDocumented: Bool { Self.documented.contains(self) }
}
