/// One answer the emulator gives instead of handling a request normally.
///
/// Written as text on the command line and in JSON: `429`, `503:Shutdown` (status, optionally with a reason),
/// `goaway`, `goaway:IdleTimeout` (GOAWAY with that reason; default `Shutdown`), `drop` (close the connection), or
/// `ok` (no fault: a script's way to let requests through before the next fault).
public enum FaultAnswer: Sendable, Hashable {
    /// No fault: the request is handled normally.
    case pass
    /// An error status with an APNs reason.
    case status(Int, reason: String)
    /// GOAWAY with `{"reason": …}`; the request is not processed and the connection closes.
    case goAway(reason: String)
    /// The TCP connection closes without an answer.
    case drop

    /// Parses the text form.
    /// - Returns: `nil` when the text is not one of the forms above.
    public init?(text: String) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let head = parts.first else { return nil }
        switch head.lowercased() {
        case "goaway":
            self = .goAway(reason: parts.count > 1 ? parts[1] : "Shutdown")
        case "drop" where parts.count == 1:
            self = .drop
        case "ok" where parts.count == 1:
            self = .pass
        default:
            guard let status = Int(head), (400...599).contains(status) else { return nil }
            guard let reason = parts.count > 1 ? parts[1] : Self.defaultReason(for: status) else { return nil }
            self = .status(status, reason: reason)
        }
    }

    /// The text form.
    public var text: String {
        switch self {
        case .status(let status, let reason): "\(status):\(reason)"
        case .goAway(let reason): "goaway:\(reason)"
        case .drop: "drop"
        case .pass: "ok"
        }
    }

    /// The reason APNs gives most often with a status.
    static func defaultReason(for status: Int) -> String? {
        switch status {
        case 400: "BadDeviceToken"
        case 403: "Forbidden"
        case 410: "Unregistered"
        case 413: "PayloadTooLarge"
        case 429: "TooManyRequests"
        case 500: "InternalServerError"
        case 503: "ServiceUnavailable"
        default: nil
        }
    }
}

extension FaultAnswer: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let answer = FaultAnswer(text: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a fault: \(text)"))
        }
        self = answer
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.text)
    }
}
