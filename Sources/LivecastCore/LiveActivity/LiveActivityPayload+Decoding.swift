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
        self = try Self.decodedAsDevice(bytes).payload
    }

    /// Reads a payload as ``init(decoding:)`` does, and tells whether its `alert` has a key ActivityKit does not
    /// document for a Live Activity (``LiveActivityAlert/undocumentedKey(in:)``), for which a device discards it.
    /// - Parameter bytes: The push body.
    /// - Returns: The payload, and the first undocumented alert key as a path (`alert.title-loc-key`), if any.
    package static func decodedAsDevice(
        _ bytes: some Collection<UInt8>
    ) throws(DecodingError) -> (payload: LiveActivityPayload, undocumentedAlertKey: String?) {
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
        var payload = Self(event: event, timestamp: timestamp, contentState: aps["content-state"].map(RawJSON.init))
        payload.staleDate = aps["stale-date"]?.intValue
        payload.dismissalDate = aps["dismissal-date"]?.intValue
        payload.relevanceScore = aps["relevance-score"]?.doubleValue
        payload.alert = aps["alert"].flatMap(LiveActivityAlert.init(json:))
        payload.attributesType = aps["attributes-type"]?.stringValue
        payload.attributes = aps["attributes"].map(RawJSON.init)
        payload.inputPushToken = aps["input-push-token"]?.intValue == 1
        payload.inputPushChannel = aps["input-push-channel"]?.stringValue
        for (key, value) in members where key != "aps" {
            payload.customKeys[key] = RawJSON(value)
        }
        return (payload, aps["alert"].flatMap(LiveActivityAlert.undocumentedKey(in:)))
    }

    /// A push body that is not a Live Activity payload.
    public struct DecodingError: Error, Hashable, CustomStringConvertible {
        /// What is missing or malformed.
        public let message: String
        public var description: String { self.message }
    }
}
