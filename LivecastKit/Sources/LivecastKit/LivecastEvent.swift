/// What became of a report: Livecast acknowledged it, it will be tried again, or it was given up.
///
/// Read them from ``LivecastClient/events``.
public struct LivecastEvent: Sendable, CustomStringConvertible {
    /// The kind of event.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String { case delivered, retrying, dropped }
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

        public var description: String { self.value.rawValue }
    }

    /// The kind of event.
    public let kind: Kind
    /// The report it is about.
    public let report: LivecastReport
    /// Livecast's HTTP status, when it answered.
    public let status: Int?
    /// Livecast's `error.code`, when it answered with an error.
    public let errorCode: String?
    /// Livecast's `error.message`, or what went wrong on the way.
    public let message: String?
    /// For ``Kind/retrying``: how long the client waits before the next try.
    public let retryDelay: Duration?

    public var description: String {
        var text = "\(self.kind): \(self.report)"
        if let status { text += " (\(status)\(self.errorCode.map { " \($0)" } ?? ""))" }
        if let message { text += ": \(message)" }
        if let retryDelay { text += ", next try in \(retryDelay)" }
        return text
    }
}
