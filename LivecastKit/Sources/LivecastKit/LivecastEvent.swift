/// What became of a report (Livecast acknowledged it, it will be tried again, it waits for something to change, or
/// it was given up and why), or something the app should know about the client itself (its file cannot be read, a
/// user could not be bound).
///
/// Read them from ``LivecastClient/events``.
public struct LivecastEvent: Sendable, CustomStringConvertible {
    /// The kind of event.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String { case delivered, retrying, held, dropped, storeUnreadable, identityBindingFailed }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Livecast acknowledged the report (`2xx`, or `404` for a removal of something it no longer has).
        public static let delivered = Self(.delivered)
        /// The report could not be delivered now (a network error, `408`, `429`, `5xx`, or a `409` without a
        /// `field`: a registration that raced another) and will be tried again after ``LivecastEvent/retryDelay``.
        public static let retrying = Self(.retrying)
        /// The report is kept, but waits for something to change before it can go: Livecast answered that the
        /// device holds as many push-to-start tokens or running activities as it may (`409 device_limit_reached`),
        /// or that the activity's feed cannot be followed (`404` naming `feed`: it may not exist yet); or a
        /// push-to-start registration waits for the app to say who the user is
        /// (``LivecastClient/identify(userID:assertion:)`` or ``LivecastClient/forgetUser()``) so that it does not
        /// unbind the user Livecast has. Tried again after ``LivecastEvent/retryDelay``, at ``LivecastClient/resume()``,
        /// and as soon as the device reports something gone (which may make room).
        public static let held = Self(.held)
        /// The report was given up for good: ``LivecastEvent/dropReason`` says why (an answer of Livecast that can
        /// never succeed, with ``LivecastEvent/status`` and ``LivecastEvent/errorCode``; or the report stayed
        /// undelivered longer than ``RetryPolicy/reportLifetime``; or ``LivecastClient/unregisterDevice()`` made
        /// it moot).
        public static let dropped = Self(.dropped)
        /// The store file (`livecast-kit.json`, which holds the device id) exists but cannot be read or decoded; it
        /// is left as it is and ``LivecastEvent/message`` says why. No ``LivecastEvent/report``. Until it can be
        /// read, the client keeps this launch's reports in memory and sends nothing (see
        /// ``LivecastClient/discardUnreadableStore()``).
        public static let storeUnreadable = Self(.storeUnreadable)
        /// A registration could not be bound to the user given to ``LivecastClient/identify(userID:assertion:)``:
        /// the assertion closure threw, Livecast refused its assertion twice (`403 invalid_user_assertion`:
        /// ``LivecastEvent/message`` says why), or the app did not say who the user is within
        /// ``LivecastClient/Configuration/identifyGracePeriod`` of launch. The registration is sent without the
        /// user, so the token is kept.
        public static let identityBindingFailed = Self(.identityBindingFailed)

        public var description: String { self.value.rawValue }
    }

    /// Why a report was given up (``Kind/dropped``).
    public struct DropReason: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String {
            case keyRefused, forbidden, invalid, notFound, activityEnded, tokenTaken, conflict, expired, deviceUnregistered, refused
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// `401`: Livecast does not know the client key (revoked, or another server's). No report with it can
        /// succeed.
        public static let keyRefused = Self(.keyRefused)
        /// `403 forbidden`: the key may not make this report.
        public static let forbidden = Self(.forbidden)
        /// `400`, `413` or `422`: Livecast cannot take the report as it is (malformed, or a value out of its limits).
        public static let invalid = Self(.invalid)
        /// `404` to a registration: what it names is not this key's to register (another app's bundle id, another
        /// device's activity, a channel Livecast does not have).
        public static let notFound = Self(.notFound)
        /// `409` naming `activityId`: the activity has ended in Livecast, which registers nothing of it again.
        public static let activityEnded = Self(.activityEnded)
        /// `409` naming `token` or `pushToken`: Livecast keeps this token for another device, attributes type or
        /// activity and will not give it to this one, however often it is sent.
        public static let tokenTaken = Self(.tokenTaken)
        /// `409` naming another field: the report contradicts what Livecast has of it (the activity's attributes
        /// type, a retired channel).
        public static let conflict = Self(.conflict)
        /// Undelivered for longer than ``RetryPolicy/reportLifetime``.
        public static let expired = Self(.expired)
        /// ``LivecastClient/unregisterDevice()`` made it moot.
        public static let deviceUnregistered = Self(.deviceUnregistered)
        /// Another answer that no retry can change.
        public static let refused = Self(.refused)

        public var description: String { self.value.rawValue }
    }

    /// The kind of event.
    public let kind: Kind
    /// The report it is about; `nil` for ``Kind/storeUnreadable``.
    public let report: LivecastReport?
    /// Livecast's HTTP status, when it answered.
    public let status: Int?
    /// Livecast's `error.code`, when it answered with an error.
    public let errorCode: String?
    /// Livecast's `error.message`, or what went wrong on the way.
    public let message: String?
    /// For ``Kind/retrying`` and ``Kind/held``: how long the client waits before the next try.
    public let retryDelay: Duration?
    /// For ``Kind/dropped``: why the report was given up.
    public let dropReason: DropReason?

    init(
        kind: Kind,
        report: LivecastReport?,
        status: Int? = nil,
        errorCode: String? = nil,
        message: String? = nil,
        retryDelay: Duration? = nil,
        dropReason: DropReason? = nil
    ) {
        self.kind = kind
        self.report = report
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.retryDelay = retryDelay
        self.dropReason = dropReason
    }

    public var description: String {
        var text = "\(self.kind)"
        if let report { text += ": \(report)" }
        if let dropReason { text += " [\(dropReason)]" }
        if let status { text += " (\(status)\(self.errorCode.map { " \($0)" } ?? ""))" }
        if let message { text += ": \(message)" }
        if let retryDelay { text += ", next try in \(retryDelay)" }
        return text
    }
}
