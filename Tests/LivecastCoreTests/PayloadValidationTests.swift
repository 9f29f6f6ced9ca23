import LivecastCore
import Testing

/// Each ActivityKit rule refuses what breaks it, naming the field.
@Suite struct PayloadValidationTests {
    private let state = try! RawJSON(validating: #"{"homeScore": 0}"#)
    private let attributes = try! RawJSON(validating: #"{"homeTeam": "Giants"}"#)

    private func start() -> LiveActivityPayload {
        .start(
            timestamp: 100,
            attributesType: "GameAttributes",
            attributes: self.attributes,
            contentState: self.state,
            alert: LiveActivityAlert(title: "Go")
        )
    }

    private func failure(_ payload: LiveActivityPayload, for destination: PushDestination = .device) -> PayloadValidationError? {
        do {
            _ = try payload.validated(for: destination)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: ["alert", "attributes-type", "attributes", "content-state"])
    func startRequires(_ field: String) {
        var payload = self.start()
        switch field {
        case "alert": payload.alert = nil
        case "attributes-type": payload.attributesType = nil
        case "attributes": payload.attributes = nil
        default: payload.contentState = nil
        }
        let error = self.failure(payload)
        #expect(error?.code == .missingField)
        #expect(error?.field == field)
    }

    @Test func aCompleteStartPasses() {
        #expect(self.failure(self.start()) == nil)
    }

    @Test func inputPushTokenAndChannelExcludeEachOther() {
        var payload = self.start()
        payload.inputPushToken = true
        #expect(self.failure(payload) == nil)
        payload.inputPushChannel = "dHN0LXNyY2gtY2hubA=="
        #expect(self.failure(payload)?.code == .conflictingFields)
    }

    @Test func dismissalDateOnlyOnEnd() {
        var update = LiveActivityPayload.update(timestamp: 100, contentState: self.state)
        update.dismissalDate = 200
        #expect(self.failure(update)?.field == "dismissal-date")
        #expect(self.failure(update)?.code == .fieldNotAllowed)
        var start = self.start()
        start.dismissalDate = 200
        #expect(self.failure(start)?.field == "dismissal-date")
        #expect(self.failure(.end(timestamp: 100, dismissalDate: 200)) == nil)
    }

    @Test func startOnlyFieldsAreRefusedElsewhere() {
        var update = LiveActivityPayload.update(timestamp: 100, contentState: self.state)
        update.inputPushToken = true
        #expect(self.failure(update)?.field == "input-push-token")
        var end = LiveActivityPayload.end(timestamp: 100)
        end.attributesType = "GameAttributes"
        #expect(self.failure(end)?.field == "attributes-type")
    }

    @Test func staleDateMustFollowTimestamp() {
        var update = LiveActivityPayload.update(timestamp: 100, contentState: self.state)
        update.staleDate = 100
        #expect(self.failure(update)?.field == "stale-date")
        update.staleDate = 101
        #expect(self.failure(update) == nil)
    }

    @Test func updateNeedsContentStateAndObjectsStayObjects() throws {
        #expect(self.failure(LiveActivityPayload(event: .update, timestamp: 100))?.field == "content-state")
        let array = try RawJSON(validating: "[1, 2]")
        #expect(self.failure(.update(timestamp: 100, contentState: array))?.code == .invalidValue)
    }

    @Test func broadcastsCannotStart() {
        #expect(self.failure(self.start(), for: .broadcast)?.field == "event")
    }

    @Test func sizeLimitsAreMeasuredOnTheExactBytes() throws {
        // The update's bytes without padding, to size the padding exactly to the limit.
        let base = LiveActivityPayload.update(timestamp: 100, contentState: try RawJSON(validating: #"{"p":""}"#)).encoded().count
        for destination in [PushDestination.device, .broadcast] {
            let fitting = String(repeating: "x", count: destination.maximumPayloadSize - base)
            let exact = LiveActivityPayload.update(timestamp: 100, contentState: try RawJSON(validating: #"{"p":"\#(fitting)"}"#))
            #expect(try exact.validated(for: destination).count == destination.maximumPayloadSize)
            let over = LiveActivityPayload.update(timestamp: 100, contentState: try RawJSON(validating: #"{"p":"\#(fitting)x"}"#))
            let error = self.failure(over, for: destination)
            #expect(error?.code == .payloadTooLarge)
            #expect(error?.size == destination.maximumPayloadSize + 1)
            #expect(error?.limit == destination.maximumPayloadSize)
        }
    }

    @Test func rawJSONRefusesWhatIsNotJSON() {
        #expect(throws: RawJSON.ParseError.self) { try RawJSON(validating: "{homeScore: 1}") }
        #expect(throws: RawJSON.ParseError.self) { try RawJSON(validating: "") }
    }
}

/// Device tokens are hex of whole bytes, any case, stored lowercase.
@Suite struct DeviceTokenTests {
    @Test func normalization() {
        #expect(DeviceToken.normalized("AB01cd") == "ab01cd")
        #expect(DeviceToken.normalized("") == nil)
        #expect(DeviceToken.normalized("abc") == nil)
        #expect(DeviceToken.normalized("zz") == nil)
        #expect(DeviceToken.normalized("ab 01") == nil)
        #expect(DeviceToken.normalized(String(repeating: "ab", count: 100)) == String(repeating: "ab", count: 100))
        #expect(DeviceToken.normalized(String(repeating: "ab", count: 101)) == nil)
    }
}
