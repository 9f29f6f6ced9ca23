extension LiveActivityPayload {
    /// The payload as compact JSON bytes, `aps` first and custom keys after it in key order.
    ///
    /// This does not validate; use ``validated(for:)`` for bytes that are safe to send.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("aps")
        self.writeAPS(to: &writer)
        for key in self.customKeys.keys.sorted() {
            writer.key(key)
            writer.raw(self.customKeys[key]!)
        }
        writer.endObject()
        return writer.bytes
    }

    private func writeAPS(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("timestamp")
        writer.int(self.timestamp)
        writer.key("event")
        writer.string(self.event.rawValue)
        if let contentState = self.contentState {
            writer.key("content-state")
            writer.raw(contentState)
        }
        if let staleDate = self.staleDate {
            writer.key("stale-date")
            writer.int(staleDate)
        }
        if let dismissalDate = self.dismissalDate {
            writer.key("dismissal-date")
            writer.int(dismissalDate)
        }
        if let relevanceScore = self.relevanceScore {
            writer.key("relevance-score")
            writer.number(relevanceScore)
        }
        if let alert = self.alert {
            writer.key("alert")
            alert.write(to: &writer)
        }
        if let attributesType = self.attributesType {
            writer.key("attributes-type")
            writer.string(attributesType)
        }
        if let attributes = self.attributes {
            writer.key("attributes")
            writer.raw(attributes)
        }
        if self.inputPushToken {
            writer.key("input-push-token")
            writer.int(1)
        }
        if let inputPushChannel = self.inputPushChannel {
            writer.key("input-push-channel")
            writer.string(inputPushChannel)
        }
        writer.endObject()
    }
}
