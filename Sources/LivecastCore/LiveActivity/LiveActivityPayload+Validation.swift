extension LiveActivityPayload {
    /// Checks the payload against ActivityKit's rules and the destination's size limit, and returns the exact
    /// bytes to send.
    ///
    /// Rules: a start needs `alert`, `attributes-type`, `attributes` and `content-state`; an update needs
    /// `content-state`; `attributes-type`, `attributes`, `input-push-token` and `input-push-channel` only on start,
    /// and the last two exclude each other; `dismissal-date` only on end; `stale-date` after `timestamp`;
    /// a broadcast cannot start an activity; the encoded size is at most
    /// ``PushDestination/maximumPayloadSize``.
    /// - Parameter destination: Where the payload goes.
    /// - Returns: The encoded payload.
    /// - Throws: ``PayloadValidationError`` naming the first field at fault.
    public func validated(for destination: PushDestination) throws(PayloadValidationError) -> [UInt8] {
        try self.validateFields(for: destination)
        let bytes = self.encoded()
        guard bytes.count <= destination.maximumPayloadSize else {
            throw PayloadValidationError(
                .payloadTooLarge,
                field: nil,
                "the payload is \(bytes.count) bytes; the limit is \(destination.maximumPayloadSize)",
                size: bytes.count,
                limit: destination.maximumPayloadSize
            )
        }
        return bytes
    }

    private func validateFields(for destination: PushDestination) throws(PayloadValidationError) {
        guard self.timestamp > 0 else {
            throw PayloadValidationError(.invalidValue, field: "timestamp", "timestamp must be positive UNIX seconds")
        }
        switch self.event {
        case .start:
            guard destination == .device else {
                throw PayloadValidationError(.fieldNotAllowed, field: "event", "a broadcast cannot start an activity")
            }
            try Self.require(self.alert, "alert")
            try Self.require(self.attributesType, "attributes-type")
            try Self.require(self.attributes, "attributes")
            try Self.require(self.contentState, "content-state")
            if self.inputPushToken && self.inputPushChannel != nil {
                throw PayloadValidationError(
                    .conflictingFields,
                    field: "input-push-channel",
                    "input-push-token and input-push-channel exclude each other"
                )
            }
        case .update, .end:
            if self.event == .update { try Self.require(self.contentState, "content-state") }
            try Self.forbid(self.attributesType, "attributes-type", on: self.event)
            try Self.forbid(self.attributes, "attributes", on: self.event)
            try Self.forbid(self.inputPushToken ? true : nil, "input-push-token", on: self.event)
            try Self.forbid(self.inputPushChannel, "input-push-channel", on: self.event)
        }
        if self.event != .end {
            try Self.forbid(self.dismissalDate, "dismissal-date", on: self.event)
        }
        if let staleDate = self.staleDate, staleDate <= self.timestamp {
            throw PayloadValidationError(.invalidValue, field: "stale-date", "stale-date must be after timestamp")
        }
        if let dismissalDate = self.dismissalDate, dismissalDate < 0 {
            throw PayloadValidationError(.invalidValue, field: "dismissal-date", "dismissal-date must be UNIX seconds")
        }
        if let relevanceScore = self.relevanceScore, !relevanceScore.isFinite {
            throw PayloadValidationError(.invalidValue, field: "relevance-score", "relevance-score must be a finite number")
        }
        if let contentState = self.contentState, !contentState.isObject {
            throw PayloadValidationError(.invalidValue, field: "content-state", "content-state must be a JSON object")
        }
        if let attributes = self.attributes, !attributes.isObject {
            throw PayloadValidationError(.invalidValue, field: "attributes", "attributes must be a JSON object")
        }
        if let channel = self.inputPushChannel, channel.isEmpty {
            throw PayloadValidationError(.invalidValue, field: "input-push-channel", "input-push-channel must not be empty")
        }
        if self.customKeys["aps"] != nil {
            throw PayloadValidationError(.invalidValue, field: "aps", "custom keys cannot replace aps")
        }
    }

    private static func require(_ value: (some Any)?, _ field: String) throws(PayloadValidationError) {
        guard value != nil else {
            throw PayloadValidationError(.missingField, field: field, "\(field) is required")
        }
    }

    private static func forbid(
        _ value: (some Any)?,
        _ field: String,
        on event: LiveActivityEvent
    ) throws(PayloadValidationError) {
        guard value == nil else {
            throw PayloadValidationError(.fieldNotAllowed, field: field, "\(field) is not allowed on \(event.rawValue)")
        }
    }
}
