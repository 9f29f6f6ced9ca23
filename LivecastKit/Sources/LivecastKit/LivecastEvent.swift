/// What became of a report (Livecast acknowledged it, it will be tried again, or it was given up), or something the
/// app should know about the client itself (its file cannot be read, a user could not be bound).
///
/// Read them from ``LivecastClient/events``.
public struct LivecastEvent: Sendable, CustomStringConvertible {
    /// The kind of event.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String { case delivered, retrying, dropped, storeUnreadable, identityBindingFailed }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Livecast acknowledged the report (`2xx`, or `404` for a removal of something it no longer has).
        public static let delivered = Self(.delivered)
        /// The report could not be delivered now (a network error, `429`, `5xx`) and will be tried again after
        /// ``LivecastEvent/retryDelay``.
        public static let retrying = Self(.retrying)
        /// The report was given up for good: Livecast refused it (a `4xx` other than `429`: ``LivecastEvent/status``
        /// and ``LivecastEvent/errorCode`` say why), or it stayed undelivered longer than
        /// ``RetryPolicy/reportLifetime``.
        public static let dropped = Self(.dropped)
        /// The store file (`livecast-kit.json`, which holds the device id) exists but cannot be read or decoded; it
        /// is left as it is and ``LivecastEvent/message`` says why. No ``LivecastEvent/report``. Until it can be
        /// read, the client keeps this launch's reports in memory and sends nothing (see
        /// ``LivecastClient/discardUnreadableStore()``).
        public static let storeUnreadable = Self(.storeUnreadable)
        /// A registration could not be bound to the user given to ``LivecastClient/identify(userID:assertion:)``:
        /// the assertion closure threw, or Livecast refused its assertion twice (`403 invalid_user_assertion`:
        /// ``LivecastEvent/message`` says why). The registration is sent without the user, so the token is kept.
        public static let identityBindingFailed = Self(.identityBindingFailed)

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
    /// For ``Kind/retrying``: how long the client waits before the next try.
    public let retryDelay: Duration?

    public var description: String {
        var text = "\(self.kind)"
        if let report { text += ": \(report)" }
        if let status { text += " (\(status)\(self.errorCode.map { " \($0)" } ?? ""))" }
        if let message { text += ": \(message)" }
        if let retryDelay { text += ", next try in \(retryDelay)" }
        return text
    }
}
