import Foundation
import LivecastCore
import Testing

/// The examples of APNS-REFERENCE §8 encode to the same JSON (compared parsed).
@Suite struct GoldenPayloadTests {
    private func parsed(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    private func parsed(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func update() throws {
        let payload = LiveActivityPayload.update(
            timestamp: 1_709_913_600,
            contentState: try RawJSON(validating: #"{"homeScore": 2, "awayScore": 1, "inning": "Top 7"}"#)
        )
        let golden = #"""
            {"aps": {"timestamp": 1709913600, "event": "update",
                     "content-state": {"homeScore": 2, "awayScore": 1, "inning": "Top 7"}}}
            """#
        #expect(try self.parsed(payload.validated(for: .device)) == self.parsed(golden))
    }

    @Test func startWithPushToStartToken() throws {
        let payload = LiveActivityPayload.start(
            timestamp: 1_709_913_600,
            attributesType: "GameAttributes",
            attributes: try RawJSON(validating: #"{"homeTeam": "Giants", "awayTeam": "Dodgers"}"#),
            contentState: try RawJSON(validating: #"{"homeScore": 0, "awayScore": 0, "inning": "Top 1"}"#),
            alert: LiveActivityAlert(title: "Game Starting", body: "Giants vs Dodgers is about to begin")
        )
        let golden = #"""
            {"aps": {"timestamp": 1709913600, "event": "start",
                     "content-state": {"homeScore": 0, "awayScore": 0, "inning": "Top 1"},
                     "attributes-type": "GameAttributes",
                     "attributes": {"homeTeam": "Giants", "awayTeam": "Dodgers"},
                     "alert": {"title": "Game Starting", "body": "Giants vs Dodgers is about to begin"}}}
            """#
        #expect(try self.parsed(payload.validated(for: .device)) == self.parsed(golden))
    }

    @Test func channelStartAsPrintedInTheSeed() throws {
        // The seed prints this start without an alert; it encodes as printed, and validation then asks for one.
        var payload = LiveActivityPayload(
            event: .start,
            timestamp: 1_709_913_600,
            contentState: try RawJSON(validating: #"{"homeScore": 0, "awayScore": 0, "inning": "Top 1"}"#)
        )
        payload.attributesType = "GameAttributes"
        payload.attributes = try RawJSON(validating: #"{"homeTeam": "Giants", "awayTeam": "Dodgers"}"#)
        let golden = #"""
            {"aps": {"timestamp": 1709913600, "event": "start",
                     "content-state": {"homeScore": 0, "awayScore": 0, "inning": "Top 1"},
                     "attributes-type": "GameAttributes",
                     "attributes": {"homeTeam": "Giants", "awayTeam": "Dodgers"}}}
            """#
        #expect(try self.parsed(payload.encoded()) == self.parsed(golden))
        #expect(throws: PayloadValidationError.self) { try payload.validated(for: .device) }
        payload.alert = LiveActivityAlert(title: "Kick-off", body: "Giants vs Dodgers")
        payload.inputPushChannel = "dHN0LXNyY2gtY2hubA=="
        let bytes = try payload.validated(for: .device)
        #expect(try self.parsed(bytes)["aps"]?["input-push-channel"] == .string("dHN0LXNyY2gtY2hubA=="))
    }

    @Test func end() throws {
        let payload = LiveActivityPayload.end(
            timestamp: 1_709_913_600,
            contentState: try RawJSON(validating: #"{"homeScore": 5, "awayScore": 3, "inning": "Final"}"#),
            dismissalDate: 1_709_917_200
        )
        let golden = #"""
            {"aps": {"timestamp": 1709913600, "event": "end", "dismissal-date": 1709917200,
                     "content-state": {"homeScore": 5, "awayScore": 3, "inning": "Final"}}}
            """#
        #expect(try self.parsed(payload.validated(for: .device)) == self.parsed(golden))
    }

    @Test func everyOptionalKeyAndCustomKeys() throws {
        var payload = LiveActivityPayload.update(timestamp: 100, contentState: try RawJSON(validating: #"{"s":1}"#))
        payload.staleDate = 1000
        payload.relevanceScore = 75
        payload.alert = LiveActivityAlert(
            title: .localized(key: "GOAL_TITLE", arguments: ["Giants"]),
            body: .localized(key: "GOAL_BODY", arguments: []),
            sound: .critical(name: "goal.caf", volume: 0.5)
        )
        payload.customKeys["matchId"] = try RawJSON(validating: #""4711""#)
        let golden = #"""
            {"aps": {"timestamp": 100, "event": "update", "content-state": {"s": 1}, "stale-date": 1000,
                     "relevance-score": 75,
                     "alert": {"title": {"loc-key": "GOAL_TITLE", "loc-args": ["Giants"]}, "body": {"loc-key": "GOAL_BODY"},
                               "sound": {"critical": 1, "name": "goal.caf", "volume": 0.5}}},
             "matchId": "4711"}
            """#
        #expect(try self.parsed(payload.validated(for: .device)) == self.parsed(golden))
    }

    /// ActivityKit nests localized text under `title` and `body` (APNS-REFERENCE §3.2): the flat keys of ordinary
    /// alerts (`title-loc-key`, `loc-key`) make a device discard the whole push, so they are never written.
    @Test func localizedAlertTextIsNestedInEveryEvent() throws {
        let alert = LiveActivityAlert(title: .localized(key: "T", arguments: ["a"]), body: .localized(key: "B", arguments: ["b", "c"]))
        var start = LiveActivityPayload.start(
            timestamp: 1,
            attributesType: "GameAttributes",
            attributes: try RawJSON(validating: "{}"),
            contentState: try RawJSON(validating: "{}"),
            alert: alert
        )
        start.inputPushToken = true
        var update = LiveActivityPayload.update(timestamp: 2, contentState: try RawJSON(validating: "{}"))
        update.alert = alert
        var end = LiveActivityPayload.end(timestamp: 3)
        end.alert = alert
        for (payload, destination) in [(start, PushDestination.device), (update, .device), (update, .broadcast), (end, .broadcast)] {
            let json = try self.parsed(payload.validated(for: destination))
            let written = try #require(json.objectValue?["aps"]?.objectValue?["alert"]?.objectValue)
            #expect(Set(written.keys) == ["title", "body"])
            #expect(
                written["title"]
                    == .object(["loc-key": .string("T"), "loc-args": .array([.string("a")])])
            )
            #expect(
                written["body"]
                    == .object(["loc-key": .string("B"), "loc-args": .array([.string("b"), .string("c")])])
            )
            let decoded = try LiveActivityPayload(decoding: payload.validated(for: destination))
            #expect(decoded.alert == alert)
        }
    }

    @Test func contentStateIsPassedThroughByteForByte() throws {
        let contentState = #"{"score":1.50,"date":7.3e8,"name":"Ünïcode \"q\""}"#
        let payload = LiveActivityPayload.update(timestamp: 1, contentState: try RawJSON(validating: contentState))
        let text = String(decoding: try payload.validated(for: .device), as: UTF8.self)
        #expect(text.contains(#""content-state":\#(contentState)"#))
    }

    @Test func decodingReadsBackWhatWasEncoded() throws {
        var payload = LiveActivityPayload.start(
            timestamp: 50,
            attributesType: "DeliveryAttributes",
            attributes: try RawJSON(validating: #"{"order":"A1"}"#),
            contentState: try RawJSON(validating: #"{"eta":12}"#),
            alert: LiveActivityAlert(title: "On its way", sound: .named("default"))
        )
        payload.inputPushToken = true
        payload.staleDate = 60
        payload.relevanceScore = 0.25
        let decoded = try LiveActivityPayload(decoding: payload.validated(for: .device))
        #expect(decoded == payload)
    }
}
