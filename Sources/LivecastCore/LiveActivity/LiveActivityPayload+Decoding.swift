import Foundation

extension LiveActivityPayload {
    /// Reads a payload from the JSON a device receives.
    ///
    /// Lenient like a device: unknown `aps` keys are ignored; fields of the wrong type count as absent.
    /// Use ``validated(for:)`` afterwards to apply ActivityKit's rules.
    /// - Parameter bytes: The push body.
    /// - Throws: ``DecodingError`` when the body is not a JSON object with an `aps` object holding a known
    ///   `event` and an integer `timestamp`.
    public init(decoding bytes: some Collection<UInt8>) throws(DecodingError) {
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes)), let members = root.objectValue else {
            throw DecodingError(message: "the payload is not a JSON object")
        }
        guard let aps = members["aps"]?.objectValue else {
            throw DecodingError(message: "the payload has no aps object")
        }
        guard let eventName = aps["event"]?.stringValue, let event = LiveActivityEvent(rawValue: eventName) else {
            throw DecodingError(message: "aps.event must be start, update or end")
        }
        guard let timestamp = aps["timestamp"]?.intValue else {
            throw DecodingError(message: "aps.timestamp must be an integer")
        }
        self.init(event: event, timestamp: timestamp, contentState: aps["content-state"].map(RawJSON.init))
        self.staleDate = aps["stale-date"]?.intValue
        self.dismissalDate = aps["dismissal-date"]?.intValue
        self.relevanceScore = aps["relevance-score"]?.doubleValue
        self.alert = aps["alert"].flatMap(LiveActivityAlert.init(json:))
        self.attributesType = aps["attributes-type"]?.stringValue
        self.attributes = aps["attributes"].map(RawJSON.init)
        self.inputPushToken = aps["input-push-token"]?.intValue == 1
        self.inputPushChannel = aps["input-push-channel"]?.stringValue
        for (key, value) in members where key != "aps" {
            self.customKeys[key] = RawJSON(value)
        }
    }

    /// A push body that is not a Live Activity payload.
    public struct DecodingError: Error, Hashable, CustomStringConvertible {
        /// What is missing or malformed.
        public let message: String
        public var description: String { self.message }
    }
}
